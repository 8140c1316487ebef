package scaffold

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/toolc/toolc/internal/inputfile"
)

// ModulePath is the module of the handler SDK that a new project requires.
const ModulePath = "github.com/toolc/toolc"

// GoVersion is the go line that a new project's go.mod declares: the go
// line of toolc's own go.mod, the lowest Go release that toolc's
// requirements allow, so that go mod tidy leaves it as it is. A test keeps
// it, go.mod and the README's "Go 1.26 or newer" in step.
const GoVersion = "1.26.0"

// SDK says where a new project gets the handler SDK, ModulePath.
type SDK struct {
	// Version is what go.mod requires: a released version of toolc, or
	// v0.0.0 when Dir replaces it.
	Version string
	// Dir, when set, is the absolute path of a toolc checkout that a
	// replace directive points the project at.
	Dir string
}

// FindSDK returns the SDK for a new project. dir, when not empty, is a
// toolc checkout the user named (toolc init --sdk). Otherwise a toolc
// installed at a released version requires that version, which the module
// proxy serves; and a toolc built from a checkout (go run ./cmd/toolc,
// go install ./cmd/toolc), whose version no proxy can serve, points the
// project at that checkout. A development build whose checkout cannot be
// found has no SDK to offer, and says how to give one.
func FindSDK(dir string) (SDK, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return SDK{}, err
		}
		if err := isCheckout(abs); err != nil {
			return SDK{}, fmt.Errorf("--sdk %s: %v", dir, err)
		}
		return SDK{Version: "v0.0.0", Dir: abs}, nil
	}
	var version string
	if info, ok := debug.ReadBuildInfo(); ok {
		version = info.Main.Version
	}
	if released(version) {
		return SDK{Version: version}, nil
	}
	if root := checkout(); root != "" {
		return SDK{Version: "v0.0.0", Dir: root}, nil
	}
	return SDK{}, noSDK(version)
}

// noSDK says why a development build whose checkout is gone has no SDK,
// and how to give one. toolc is not published to the module proxy, so
// the way to a toolc and an SDK that agree is a checkout of its source.
func noSDK(version string) error {
	return fmt.Errorf("this toolc is a development build (version %s) and its source checkout is not on this machine, so no version of %s that go mod tidy could fetch is known; "+
		"give a toolc checkout with --sdk DIR, and install toolc from that checkout (go -C DIR install ./cmd/toolc, which writes it into $(go env GOPATH)/bin, a directory that must be on PATH)",
		orDevel(version), ModulePath)
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// pseudo matches the tail of a pseudo-version, v0.0.0-20260101120000-abcdef123456,
// which the go command stamps on a build from a checkout between tags.
var pseudo = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// released reports whether v is a tagged version that a module proxy can
// serve: not (devel), not a pseudo-version of a commit that may never
// have been pushed, and not a build of a modified checkout (+dirty).
func released(v string) bool {
	return strings.HasPrefix(v, "v") && !strings.Contains(v, "+") && !pseudo.MatchString(v)
}

// checkout returns the root of the toolc checkout this binary was built
// from, or "" when there is none. The compiler records each source file's
// absolute path unless the build used -trimpath; a path in the module
// cache (…/toolc@v1.2.0/…) is a download, not a checkout.
func checkout() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	root := filepath.Dir(filepath.Dir(file))
	if strings.Contains(filepath.Base(root), "@") || isCheckout(root) != nil {
		return ""
	}
	return root
}

// isCheckout reports, as an error saying why not, whether dir holds the
// toolc module.
func isCheckout(dir string) error {
	data, err := inputfile.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("not a toolc checkout: %v", err)
	}
	if path := modfile.ModulePath(data); path != ModulePath {
		return fmt.Errorf("not a toolc checkout: its go.mod is module %q, not %s", path, ModulePath)
	}
	return nil
}
