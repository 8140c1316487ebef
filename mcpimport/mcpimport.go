// Package mcpimport writes a contract package for an existing MCP server:
// toolc import mcp. It starts the server (or connects to its url), pages
// through tools/list, states each tool as a contract (upstream.State, the
// same conversion that pins the served tools to the contract), checks
// what it wrote with toolc's compiler, and writes the package's toolc.lock.
//
//	rep, err := mcpimport.Run(ctx, mcpimport.Options{Out: "docs", Command: []string{"npx", "-y", "@acme/docs-mcp@1.4.0"}})
//	rep.Print(os.Stdout)
//
// A tool the contract language cannot express is left out, with a comment
// in the contract that names it and what it would need. Run against a
// directory that holds an import already, it reports how the server
// differs from that contract in the lock's change vocabulary, and writes
// nothing unless Force is set.
package mcpimport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/atomicfile"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/upstream"
)

// Options say what to import, and where to.
type Options struct {
	// Out is the contract package's directory, made if missing.
	Out string
	// Command, or URL, is the server, as the contract's upstream block
	// will name it.
	Command []string
	URL     string
	// Env names variables of toolc's environment that the command needs
	// (an API key): the contract gets env: NAME: {env: NAME} for each.
	Env []string
	// Name is the service's name; the default comes from Out.
	Name string
	// Force writes over an import that differs from the server.
	Force bool
	// Insecure allows a url that is plain http beyond loopback.
	Insecure bool
	// Stderr receives the server's standard error.
	Stderr io.Writer
}

// Report is what Run did.
type Report struct {
	// Dir and File are where the contract is.
	Dir, File string
	// Unchanged, Changed and LeftOut are the server's tools: imported as
	// the server states them, imported with changes (by tool, each a
	// sentence), and left out (by tool, why).
	Unchanged []string
	Changed   map[string][]string
	LeftOut   map[string]string
	// Differences, on a rerun, are how the server differs from the
	// contract already there; Wrote says whether Run wrote the files.
	Differences []lock.Change
	Rerun       bool
	Wrote       bool
}

// ContractFile is the name of the contract that Run writes in Out.
const ContractFile = "upstream.cue"

// ErrDiffers is returned, with a report, when the server differs from an
// earlier import and Force is not set.
var ErrDiffers = errors.New("the server differs from the contract; nothing was written (--force writes it)")

var (
	serviceNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,63}$`)
	semverRE      = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// Run imports the server.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if (len(opts.Command) == 0) == (opts.URL == "") {
		return nil, errors.New("give a command (after --) or --url, one of them")
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	name := opts.Name
	if name == "" {
		name = serviceName(filepath.Base(out))
	}
	if !serviceNameRE.MatchString(name) {
		return nil, fmt.Errorf("service name %q is not lower-case words joined by hyphens; give --name", name)
	}
	up := &catalog.Upstream{Command: opts.Command, URL: opts.URL}
	for _, e := range opts.Env {
		up.Env = append(up.Env, catalog.ValueFrom{Name: e, Env: e})
	}
	slices.SortFunc(up.Env, func(a, b catalog.ValueFrom) int { return strings.Compare(a.Name, b.Name) })
	// The server runs where it will run when served, its contract's
	// directory, if that exists yet.
	runDir := out
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		if runDir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	probe := &catalog.Service{Name: name, Dir: runDir, Upstream: up}
	listing, err := upstream.List(ctx, probe, upstream.Options{Stderr: opts.Stderr, Insecure: opts.Insecure})
	if err != nil {
		return nil, err
	}
	svc := &catalog.Service{Name: name, Version: "1.0.0", Upstream: up, Tools: []*catalog.Tool{}}
	svc.Description = "The tools of an existing MCP server, held to this contract"
	if s := listing.Server; s != nil {
		if v := s.Version; semverRE.MatchString(v) {
			svc.Version = v
		}
		who := s.Name
		if s.Title != "" {
			who = s.Title
		}
		if who != "" {
			svc.Description = fmt.Sprintf("The tools of the MCP server %s %s, held to this contract", who, s.Version)
		}
	}
	rep := &Report{Dir: out, File: filepath.Join(out, ContractFile), Changed: map[string][]string{}, LeftOut: map[string]string{}}
	cf := &contractFile{pkg: packageName(name), svc: svc, changes: map[string][]string{}, provenan: provenance(opts)}
	keys := map[string]string{}
	for _, lt := range listing.Tools {
		if lt == nil {
			continue
		}
		st := upstream.State(lt)
		switch {
		case st.Tool == nil:
			rep.LeftOut[lt.Name] = "it needs " + st.Missing
		case keys[st.Tool.Name] != "":
			other := keys[st.Tool.Name]
			rep.LeftOut[lt.Name] = fmt.Sprintf("its contract key %q is also %q's; one key cannot name two tools", st.Tool.Name, other)
		default:
			keys[st.Tool.Name] = lt.Name
			svc.Tools = append(svc.Tools, st.Tool)
			if len(st.Changes) > 0 {
				rep.Changed[lt.Name] = st.Changes
				cf.changes[st.Tool.Name] = st.Changes
			}
		}
	}
	// The colliding tool that came first goes too: neither name may be
	// served by a guess.
	for name, why := range rep.LeftOut {
		if strings.Contains(why, "one key cannot name two tools") {
			key, _, _ := upstream.ToolKey(name)
			svc.Tools = slices.DeleteFunc(svc.Tools, func(t *catalog.Tool) bool {
				if t.Name == key {
					rep.LeftOut[upstream.UpstreamName(t)] = fmt.Sprintf("its contract key %q is also %q's; one key cannot name two tools", key, name)
					delete(rep.Changed, upstream.UpstreamName(t))
					return true
				}
				return false
			})
		}
	}
	// What the compiler refuses is left out too, with its reason.
	cat, err := compileChecked(cf, rep)
	if err != nil {
		return nil, err
	}
	for _, t := range svc.Tools {
		if _, changed := rep.Changed[upstream.UpstreamName(t)]; !changed {
			rep.Unchanged = append(rep.Unchanged, upstream.UpstreamName(t))
		}
	}
	for name, why := range rep.LeftOut {
		cf.leftOut = append(cf.leftOut, leftOut{name, why})
	}
	slices.SortFunc(cf.leftOut, func(a, b leftOut) int { return strings.Compare(a.name, b.name) })
	data := cf.render()
	newLock := lock.FromCatalog(cat)

	if old, err := os.ReadFile(rep.File); err == nil {
		rep.Rerun = true
		prev, err := compileDir(out)
		if err != nil {
			return nil, fmt.Errorf("the contract already in %s does not compile: %v; move it away, or fix it", out, err)
		}
		rep.Differences = lock.Diff(lock.FromCatalog(prev), newLock)
		if len(rep.Differences) == 0 && string(old) == string(data) {
			return rep, nil
		}
		if len(rep.Differences) > 0 && !opts.Force {
			return rep, ErrDiffers
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(rep.File, data); err != nil {
		return nil, err
	}
	lockFile := filepath.Join(out, lock.FileName)
	lk, err := compileLock(out)
	if err != nil {
		return nil, err
	}
	if err := lk.WriteFile(lockFile); err != nil {
		return nil, err
	}
	rep.Wrote = true
	return rep, nil
}

// compileChecked renders the contract into a scratch directory and
// compiles it, leaving out each tool the compiler reports an error for,
// until it compiles clean. It returns the catalog.
func compileChecked(cf *contractFile, rep *Report) (*catalog.Catalog, error) {
	for range 3 {
		dir, err := os.MkdirTemp("", "toolc-import")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, ContractFile), cf.render(), 0o644); err != nil {
			return nil, err
		}
		res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
		if err != nil {
			return nil, err
		}
		bad := map[string]string{}
		other := ""
		for _, d := range res.Diagnostics {
			if d.Severity != diag.Error {
				continue
			}
			if t := toolAt(cf, dir, d); t != nil {
				if _, seen := bad[t.Name]; !seen {
					bad[t.Name] = fmt.Sprintf("toolc check refuses it: %s [%s]", d.Message, d.Rule)
				}
			} else if other == "" {
				other = fmt.Sprintf("%s: %s [%s]", d.Pos, d.Message, d.Rule)
			}
		}
		if len(bad) == 0 {
			if other != "" {
				return nil, fmt.Errorf("the contract written for the server does not compile: %s", other)
			}
			return res.Catalog, nil
		}
		cf.svc.Tools = slices.DeleteFunc(cf.svc.Tools, func(t *catalog.Tool) bool {
			why, out := bad[t.Name]
			if out {
				rep.LeftOut[upstream.UpstreamName(t)] = why
				delete(rep.Changed, upstream.UpstreamName(t))
			}
			return out
		})
	}
	return nil, errors.New("the contract written for the server does not compile after leaving out the tools it reported")
}

// toolAt returns the tool whose declaration holds d, by line.
func toolAt(cf *contractFile, dir string, d diag.Diagnostic) *catalog.Tool {
	lines := strings.Split(string(cf.render()), "\n")
	var cur *catalog.Tool
	for i, l := range lines {
		if i+1 > d.Pos.Line {
			break
		}
		if strings.HasPrefix(l, "\ttools: ") {
			lbl := strings.TrimSuffix(strings.TrimPrefix(l, "\ttools: "), ": {")
			for _, t := range cf.svc.Tools {
				if label(t.Name) == lbl {
					cur = t
				}
			}
		}
		if l == "}" {
			cur = nil
		}
	}
	return cur
}

// compileDir compiles the contract in dir.
func compileDir(dir string) (*catalog.Catalog, error) {
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil {
		return nil, err
	}
	for _, d := range res.Diagnostics {
		if d.Severity == diag.Error {
			return nil, fmt.Errorf("%s: %s [%s]", d.Pos, d.Message, d.Rule)
		}
	}
	return res.Catalog, nil
}

// compileLock is the lock of the contract in dir, as toolc lock run there
// writes it.
func compileLock(dir string) (*lock.Lock, error) {
	cat, err := compileDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the contract written does not compile: %v", err)
	}
	return lock.FromCatalog(cat), nil
}

// serviceName makes a service name of a directory's name.
func serviceName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
				b.WriteByte('-')
			}
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "mcp-" + s
	}
	return strings.TrimSuffix(s[:min(len(s), 64)], "-")
}

// packageName makes a CUE package name of a service name.
func packageName(service string) string {
	return strings.ReplaceAll(service, "-", "_")
}

func provenance(opts Options) string {
	if opts.URL != "" {
		return opts.URL
	}
	return strings.Join(opts.Command, " ")
}

// Print writes the summary.
func (r *Report) Print(w io.Writer) {
	if r.Rerun && len(r.Differences) > 0 {
		fmt.Fprintf(w, "the server differs from %s:\n", r.File)
		for _, c := range r.Differences {
			kind := "compatible"
			if c.Breaking {
				kind = "breaking"
			}
			fmt.Fprintf(w, "  %s (%s, %s): %s\n", c.Tool, c.Rule, kind, c.Message)
		}
	} else if r.Rerun {
		fmt.Fprintf(w, "the server matches %s\n", r.File)
	}
	n := len(r.Unchanged) + len(r.Changed)
	fmt.Fprintf(w, "imported %d tools: %d unchanged, %d with a change, %d left out\n", n, len(r.Unchanged), len(r.Changed), len(r.LeftOut))
	for _, name := range sortedKeys(r.Changed) {
		fmt.Fprintf(w, "  changed %s:\n", name)
		for _, c := range r.Changed[name] {
			fmt.Fprintf(w, "    %s\n", c)
		}
	}
	for _, name := range sortedKeys(r.LeftOut) {
		fmt.Fprintf(w, "  left out %s: %s\n", name, r.LeftOut[name])
	}
	switch {
	case r.Wrote:
		fmt.Fprintf(w, "wrote %s and %s\n", r.File, filepath.Join(r.Dir, lock.FileName))
	case r.Rerun && len(r.Differences) > 0:
		fmt.Fprintf(w, "wrote nothing; toolc import mcp --force writes the server's tools over the contract\n")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
