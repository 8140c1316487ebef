package clientconfig

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Executable is the absolute path of the running toolc, which the client
// will start.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, goRunBuild(exe)
}

var goBuildDir = regexp.MustCompile(`^go-build[0-9]+$`)

// goRunBuild refuses go run's build of toolc, in a temporary go-buildN
// directory that is gone once it exits: a configuration that named it
// would start nothing.
func goRunBuild(exe string) error {
	for dir := filepath.Dir(exe); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if goBuildDir.MatchString(filepath.Base(dir)) {
			return errors.New("this toolc is go run's temporary build, which is gone when it exits: install toolc (go install ./cmd/toolc from a checkout) and run the installed toolc install")
		}
	}
	return nil
}

// GoCommand is the absolute path of the go command on PATH (Options.Go),
// or "" when there is none.
func GoCommand() string {
	g, err := exec.LookPath("go")
	if err == nil {
		g, err = filepath.Abs(g)
	}
	if err != nil {
		return ""
	}
	return g
}

var notNameChar = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// DefaultName is the default name of the server: the bundle's directory
// name, or the project's (dir), in the characters every client accepts.
func DefaultName(dir, bundle string) string {
	base := filepath.Base(dir)
	if bundle != "" {
		if abs, err := filepath.Abs(bundle); err == nil {
			base = filepath.Base(abs)
		}
	}
	name := strings.Trim(notNameChar.ReplaceAllString(base, "-"), "-")
	if name == "" {
		return "toolc"
	}
	return name
}

// Report says what Install did with s in c's configuration, as toolc
// install prints it: the file and the outcome and, unless nothing
// changed, the entry and how c picks it up.
func (r Result) Report(w io.Writer, c Client, s Server) {
	switch r.Outcome {
	case Unchanged:
		fmt.Fprintf(w, "%s: MCP server %q is already as it would be written; nothing changed\n", r.File, s.Name)
		return
	case Added:
		fmt.Fprintf(w, "%s: added MCP server %q\n", r.File, s.Name)
	default:
		fmt.Fprintf(w, "%s: updated MCP server %q: %s changed\n", r.File, s.Name, strings.Join(r.Changed, ", "))
	}
	fmt.Fprintf(w, "\tcommand  %s\n\targs     %s\n", s.Command, strings.Join(s.Args, " "))
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "\tenv      %s=%s\n", k, s.Env[k])
	}
	fmt.Fprintln(w, c.Reload)
}
