package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// contractFilesModule is a CUE module whose contract imports a package
// of the module and embeds a file beside it.
var contractFilesModule = map[string]string{
	"cue.mod/module.cue": "module: \"example.com/m@v0\"\nlanguage: version: \"v0.17.0\"\n",
	"lib/lib.cue":        "package lib\nword: \"ok\"\n",
	"svc/notes.txt":      "notes",
	"svc/svc.cue": `@extern(embed)

package svc

import (
	"github.com/toolc/toolc/schema"
	"example.com/m/lib"
)

_notes: _ @embed(file=notes.txt)

schema.#Service & {
	name:        "svc"
	version:     "1.0.0"
	description: "A service \(lib.word) \(_notes)"
	tools: t: {
		description: "A tool"
		request: fields: {}
	}
}
`,
}

// TestContractFilesRefused: a contract file that links to
// /proc/self/environ (the package's own, an imported package's, an
// @embed's), and a FIFO in an imported package or named by @embed, make
// check, build, lock, export and dev stop with exit 2 and a message that
// says where the file was read from, and print nothing of the environment;
// before, check, build, lock and export echoed the CI job's environment,
// and a FIFO blocked them for ever. Each run is bounded in time and
// memory.
func TestContractFilesRefused(t *testing.T) {
	const secret = "the-ci-jobs-deploy-key"
	for _, tt := range []struct {
		name  string
		setup func(dir string) error
		want  string // a regexp of the message
	}{
		{"the contract's own file", func(dir string) error { return os.Symlink("/proc/self/environ", filepath.Join(dir, "svc", "leak.cue")) },
			`svc/leak\.cue \(a link to /proc/self/environ\) leads outside the CUE module .*, to /proc/\d+/environ; toolc reads contract files only from inside their module`},
		{"an imported package's file", func(dir string) error { return os.Symlink("/proc/self/environ", filepath.Join(dir, "lib", "leak.cue")) },
			`svc/svc\.cue:7:2: import "example\.com/m/lib": lib/leak\.cue \(a link to /proc/self/environ\) leads outside the CUE module`},
		{"an @embed", func(dir string) error {
			os.Remove(filepath.Join(dir, "svc", "notes.txt"))
			return os.Symlink("/proc/self/environ", filepath.Join(dir, "svc", "notes.txt"))
		}, `svc/svc\.cue:10:11: @embed\(file=notes\.txt\): svc/notes\.txt \(a link to /proc/self/environ\) leads outside the CUE module`},
		{"a FIFO in an imported package", func(dir string) error { return mkfifo(filepath.Join(dir, "lib", "x.cue")) },
			`svc/svc\.cue:7:2: import "example\.com/m/lib": lib/x\.cue is a FIFO, not a regular file`},
		{"a FIFO named by @embed", func(dir string) error {
			os.Remove(filepath.Join(dir, "svc", "notes.txt"))
			return mkfifo(filepath.Join(dir, "svc", "notes.txt"))
		}, `svc/svc\.cue:10:11: @embed\(file=notes\.txt\): svc/notes\.txt is a FIFO, not a regular file`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, contractFilesModule)
			if err := tt.setup(dir); err != nil {
				t.Skip(err)
			}
			opts := runOpts{dir: dir, env: []string{"CI_DEPLOY_KEY=" + secret, "TOOLC_CACHE=" + t.TempDir()}, timeout: 30 * time.Second, memKiB: 2 << 20}
			for _, args := range [][]string{
				{"check", "./svc"}, {"check", "--format", "json", "./svc"},
				{"build", "-o", filepath.Join(t.TempDir(), "c.json"), "./svc"},
				{"lock", "./svc"},
				{"export", "--format", "openai-chat", "./svc"},
				{"dev", "--http", "127.0.0.1:0", "./svc"},
			} {
				r := toolcRun(t, opts, args...)
				wantStatus(t, r, exitUsage, strings.Join(args, " "))
				wantMatch(t, r.stderr, `^toolc `+args[0]+`: `+tt.want, strings.Join(args, " "))
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("%s printed the environment:\n%.500s", strings.Join(args, " "), r.stdout+r.stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "toolc.lock")); err == nil {
				t.Error("lock wrote toolc.lock")
			}
		})
	}
	// The module as it is compiles, with the embedded file.
	dir := writeFiles(t, contractFilesModule)
	out := filepath.Join(t.TempDir(), "c.json")
	r := toolcRun(t, runOpts{dir: dir}, "build", "-o", out, "./...")
	wantStatus(t, r, exitOK, "build of the module as it is")
	if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), `"description":"A service ok notes"`) {
		t.Errorf("the catalog lacks the embedded notes: %.300s %v", data, err)
	}
}
