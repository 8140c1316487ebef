//go:build unix

package compiler_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/compiler"
)

// A contract module for the contract file rules: svc imports lib, and
// embeds data.json; the tests add the special files and links.
const (
	rulesModule = "module: \"example.com/m@v0\"\nlanguage: version: \"v0.17.0\"\n"
	rulesSvc    = `@extern(embed)

package svc

import (
	"github.com/toolc/toolc/schema"
	"example.com/m/lib"
)

_data: _ @embed(file=data.json)
EMBEDS

schema.#Service & {
	name:        "svc"
	version:     "1.0.0"
	description: "A service \(lib.word) \(_data.x) EXTRA"
	tools: t: {
		description: "A tool"
		request: fields: {}
	}
}
`
	secret = "the-secret-of-the-ci-job"
)

// TestContractFileRules: every file that compiling a contract reads (its
// own .cue files and those above it, the packages it imports, in the
// module or in cue.mod/pkg, the targets of @embed, cue.mod's files) is
// read only from a regular file inside the module, within the input limit:
// a link that leads outside (to /proc/self/environ, which the catalog and
// the diagnostics would echo, or to /dev/zero) or a FIFO (on which the
// loader blocked for ever) is refused with a message that says where it
// was read from, as an I/O problem. What CUE only lists beside the
// contracts (data.json, notes.txt in an imported package's directory) is
// passed over when it is no regular file, as before. Each compile runs
// under a deadline, so a loader that blocks fails the test.
func TestContractFileRules(t *testing.T) {
	t.Setenv("TOOLC_CI_SECRET", secret)
	tests := []struct {
		name string
		// embeds are lines added to svc.cue; extra is CUE interpolated
		// into the description.
		embeds, extra string
		// setup adds the files and links, in the module at dir.
		setup func(t *testing.T, dir string)
		env   map[string]string
		// err is part of the error; "" for none, and then want is part
		// of the service's description.
		err, want string
	}{{
		name: "the contract as it is",
		want: "A service ok hi",
	}, {
		name:  "a contract file that links to /proc/self/environ",
		setup: link("/proc/self/environ", "svc/leak.cue"),
		err:   "svc/leak.cue (a link to /proc/self/environ) leads outside the CUE module ",
	}, {
		name:  "a contract file that links outside the module",
		setup: link("../../outside/o.cue", "svc/o.cue"),
		err:   "svc/o.cue (a link to ../../outside/o.cue) leads outside the CUE module ",
	}, {
		name:   "a contract file that links inside the module",
		setup:  both(write("shared/s.cue", "package svc\n\n_shared: \"inside\"\n"), link("../shared/s.cue", "svc/s.cue")),
		extra:  `\(_shared)`,
		want:   "A service ok hi inside",
		embeds: "",
	}, {
		name:  "a .cue file above the contract that links to /dev/zero",
		setup: link("/dev/zero", "above.cue"),
		err:   "above.cue (a link to /dev/zero) leads outside the CUE module ",
	}, {
		name:  "a FIFO .cue file in an imported package",
		setup: fifo("lib/x.cue"),
		err:   `svc/svc.cue:7:2: import "example.com/m/lib": lib/x.cue is a FIFO, not a regular file`,
	}, {
		name:  "an imported package's .cue file that links to /proc/self/environ",
		setup: link("/proc/self/environ", "lib/leak.cue"),
		err:   `svc/svc.cue:7:2: import "example.com/m/lib": lib/leak.cue (a link to /proc/self/environ) leads outside`,
	}, {
		name:  "an imported package through a directory that links outside",
		setup: both(rmdir("lib"), write("../outside/lib/lib.cue", "package lib\nword: \"ok\"\n"), link("../outside/lib", "lib")),
		err:   `svc/svc.cue:7:2: import "example.com/m/lib": lib/lib.cue leads outside the CUE module `,
	}, {
		name:  "a FIFO data.json and a link to /dev/zero beside an imported package",
		setup: both(fifo("lib/stuff.json"), link("/dev/zero", "lib/notes.txt")),
		want:  "A service ok hi",
	}, {
		name:  "an imported package of cue.mod/pkg with a FIFO .cue file",
		setup: both(rmdir("lib"), write("cue.mod/pkg/example.com/m/lib/lib.cue", "package lib\nword: \"ok\"\n"), fifo("cue.mod/pkg/example.com/m/lib/x.cue")),
		err:   `svc/svc.cue:7:2: import "example.com/m/lib": cue.mod/pkg/example.com/m/lib/x.cue is a FIFO, not a regular file`,
	}, {
		name:   "an @embed of a link to /proc/self/environ",
		embeds: "_env: _ @embed(file=env.txt)",
		extra:  `\(_env)`,
		setup:  link("/proc/self/environ", "svc/env.txt"),
		err:    "svc/svc.cue:11:9: @embed(file=env.txt): svc/env.txt (a link to /proc/self/environ) leads outside the CUE module ",
	}, {
		name:   "an @embed of a FIFO beside the contract",
		embeds: "_f: _ @embed(file=f.json)",
		setup:  fifo("svc/f.json"),
		err:    "svc/svc.cue:11:7: @embed(file=f.json): svc/f.json is a FIFO, not a regular file",
	}, {
		name:   "an @embed of a FIFO in a directory below",
		embeds: "_f: _ @embed(file=sub/f.json)",
		setup:  both(write("svc/sub/keep", ""), fifo("svc/sub/f.json")),
		err:    "svc/svc.cue:11:7: @embed(file=sub/f.json): svc/sub/f.json is a FIFO, not a regular file",
	}, {
		name:   "an @embed glob that matches a link to /dev/zero",
		embeds: `_g: _ @embed(glob="sub/*.json")`,
		setup:  both(write("svc/sub/a.json", "{}"), link("/dev/zero", "svc/sub/z.json")),
		err:    `svc/svc.cue:11:7: @embed(glob="sub/*.json"): svc/sub/z.json (a link to /dev/zero) leads outside`,
	}, {
		name:   "an @embed over the input limit",
		embeds: "_big: _ @embed(file=big.json)",
		setup:  write("svc/big.json", `{"x": "`+strings.Repeat("x", 2048)+`"}`),
		env:    map[string]string{"TOOLC_MAX_INPUT": "1KiB"},
		err:    "svc/svc.cue:11:9: @embed(file=big.json): svc/big.json is over the 1KiB limit on input",
	}, {
		name:   "an @embed of a file inside the module",
		embeds: "_n: _ @embed(file=notes.txt)",
		extra:  `\(_n)`,
		setup:  write("svc/notes.txt", "embedded"),
		want:   "A service ok hi embedded",
	}, {
		name:  "cue.mod/module.cue that links to /proc/self/environ",
		setup: both(rm("cue.mod/module.cue"), link("/proc/self/environ", "cue.mod/module.cue")),
		err:   "cue.mod/module.cue (a link to /proc/self/environ) leads outside the CUE module ",
	}, {
		name:  "a FIFO cue.mod/local-module.cue",
		setup: fifo("cue.mod/local-module.cue"),
		err:   "cue.mod/local-module.cue is a FIFO, not a regular file",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			base := t.TempDir()
			dir := filepath.Join(base, "mod")
			svc := strings.Replace(strings.Replace(rulesSvc, "EMBEDS", tt.embeds, 1), "EXTRA", tt.extra, 1)
			writeTree(t, dir, map[string][]byte{
				"cue.mod/module.cue": []byte(rulesModule),
				"svc/svc.cue":        []byte(svc),
				"svc/data.json":      []byte(`{"x": "hi"}`),
				"lib/lib.cue":        []byte("package lib\nword: \"ok\"\n"),
				"../outside/o.cue":   []byte("package svc\n"),
			})
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			res, err := compileWithin(t, compiler.Config{Dir: dir}, "./svc")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Compile = %v, want an error with %q", err, tt.err)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error holds the environment: %.300s", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if res.HasErrors() {
				t.Fatalf("diagnostics: %v", res.Diagnostics)
			}
			if got := res.Catalog.Services[0].Description; !strings.Contains(got, tt.want) {
				t.Errorf("description %q, want %q", got, tt.want)
			}
		})
	}
}

// TestContractFileRulesInSession: toolc dev's Session refuses as Compile
// does, on the first compile and after an edit, and serves again once the
// file is gone.
func TestContractFileRulesInSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mod")
	writeTree(t, dir, map[string][]byte{
		"cue.mod/module.cue": []byte(rulesModule),
		"svc/svc.cue":        []byte(strings.NewReplacer("EMBEDS", "", "EXTRA", "").Replace(rulesSvc)),
		"svc/data.json":      []byte(`{"x": "hi"}`),
		"lib/lib.cue":        []byte("package lib\nword: \"ok\"\n"),
	})
	s, err := compiler.NewSession(compiler.Config{Dir: dir}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compile(); err != nil {
		t.Fatal(err)
	}
	fifo("lib/x.cue")(t, dir)
	s.Invalidate(filepath.Join(dir, "lib"), filepath.Join(dir, "svc"))
	done := make(chan error, 1)
	go func() { _, err := s.Compile(); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "lib/x.cue is a FIFO, not a regular file") {
			t.Errorf("Compile after a FIFO appeared = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Compile blocked on a FIFO in an imported package")
	}
	os.Remove(filepath.Join(dir, "lib", "x.cue"))
	s.Invalidate(filepath.Join(dir, "lib"))
	if res, err := s.Compile(); err != nil || res.HasErrors() {
		t.Errorf("Compile once the FIFO is gone = %v", err)
	}
}

// compileWithin compiles, failing the test when it does not return within
// 30 seconds (a loader blocked on a FIFO).
func compileWithin(t *testing.T, cfg compiler.Config, patterns ...string) (*compiler.Result, error) {
	t.Helper()
	type result struct {
		res *compiler.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := compiler.Compile(cfg, patterns...)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("Compile did not return: it blocked on a file")
		return nil, nil
	}
}

type setupFunc = func(t *testing.T, dir string)

func link(target, name string) setupFunc {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

func fifo(name string) setupFunc {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip(err)
		}
	}
}

func write(name, data string) setupFunc {
	return func(t *testing.T, dir string) {
		writeTree(t, dir, map[string][]byte{name: []byte(data)})
	}
}

func rm(name string) setupFunc {
	return func(t *testing.T, dir string) {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

func rmdir(name string) setupFunc {
	return func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, filepath.FromSlash(name))) }
}

func both(fs ...setupFunc) setupFunc {
	return func(t *testing.T, dir string) {
		for _, f := range fs {
			f(t, dir)
		}
	}
}
