package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// pluginProtocol are the import paths of the plugin protocol and what it
// brings: a service that runs its handlers in process needs none of them,
// and they were a third of this binary (README, Embedding).
var pluginProtocol = []string{
	"github.com/hashicorp/go-plugin",
	"github.com/hashicorp/go-hclog",
	"github.com/hashicorp/yamux",
	"google.golang.org/grpc",
	"google.golang.org/genproto",
	"github.com/toolc/toolc/plugins/rpc",
	"github.com/toolc/toolc/plugins/proto",
	"github.com/toolc/toolc/host",
}

// TestLinksNoPluginProtocol lists, with go list -deps, every package
// that this service, the handler SDK and the runtime import, for each
// operating system toolc supports, and fails on any of the plugin
// protocol's. Go links every imported package and runs its init, whether
// the program calls into it or not, so one import anywhere in the graph
// (a generated Serve in package notes, runtime.Plugin back in runtime)
// brings all of it back.
func TestLinksNoPluginProtocol(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".",
			"github.com/toolc/toolc/plugins", "github.com/toolc/toolc/runtime", "github.com/toolc/toolc/catalog")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 50 {
			t.Fatalf("GOOS=%s go list -deps listed %d packages, too few to be this service's", goos, len(deps))
		}
		var linked []string
		for _, dep := range deps {
			for _, bad := range pluginProtocol {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					linked = append(linked, dep)
				}
			}
		}
		if len(linked) > 0 {
			t.Errorf("GOOS=%s: the service links %d packages of the plugin protocol: %s (go list -f '{{.ImportPath}} {{.Imports}}' -deps . shows who imports them)",
				goos, len(linked), strings.Join(linked, ", "))
		}
	}
}
