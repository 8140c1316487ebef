package runtime_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// transportDeps are the modules and packages of the transports: the MCP
// SDK, Prometheus (and the protobuf it brings), JOSE and OAuth clients,
// and toolc's own packages built on them. The runtime is the core that a
// service calling its tools in process links, and it needs none of them.
var transportDeps = []string{
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/prometheus/",
	"github.com/go-jose/go-jose",
	"golang.org/x/oauth2",
	"google.golang.org/protobuf",
	"github.com/toolc/toolc/oauth",
	"github.com/toolc/toolc/mcpserver",
	"github.com/toolc/toolc/httpapi",
}

// TestRuntimeLinksNoTransport lists, with go list -deps, every package
// that the runtime imports, for each operating system toolc supports, and
// fails on any of the transports'. One import anywhere in the graph (an
// oauth.Caller back in the runtime's API, a metrics counter) brings a
// whole module back, so the test names who imports it.
func TestRuntimeLinksNoTransport(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "github.com/toolc/toolc/runtime")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 20 {
			t.Fatalf("GOOS=%s go list -deps listed %d packages, too few to be the runtime's", goos, len(lines))
		}
		importers := map[string][]string{} // package → the listed packages that import it
		var deps []string
		for _, l := range lines {
			pkg, imports, _ := strings.Cut(l, ": ")
			deps = append(deps, pkg)
			for _, imp := range strings.Fields(imports) {
				importers[imp] = append(importers[imp], pkg)
			}
		}
		for _, dep := range deps {
			for _, bad := range transportDeps {
				if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
					t.Errorf("GOOS=%s: the runtime links %s, imported by %s", goos, dep, strings.Join(importers[dep], ", "))
				}
			}
		}
	}
}
