// Command embed is a small service that runs its tools in its own
// process: it embeds the catalog that toolc build compiled from
// notes/notes.cue, runs the tools through the handlers that toolc gen go
// generated in package notes, and serves them over MCP (Streamable HTTP,
// at /mcp) and the function-call API (/v1/tools, /v1/call), until SIGINT
// or SIGTERM. No CUE, no toolc, no plugin process and no plugin protocol
// at run time: the binary links neither go-plugin nor gRPC.
//
//	go generate ./examples/embed    # notes/tools_gen.go and toolc.catalog.json, from notes/notes.cue
//	go run ./examples/embed -addr 127.0.0.1:8080
//	curl -s 127.0.0.1:8080/v1/call -d '{"name":"add_note","arguments":{"title":"Buy milk"}}'
package main

//go:generate go run ../../cmd/toolc gen go ./notes
//go:generate go run -C ../.. ./cmd/toolc build -o examples/embed/toolc.catalog.json ./examples/embed/notes

import (
	"context"
	"embed"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/examples/embed/notes"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/serve"
)

//go:embed toolc.catalog.json
var catalogFS embed.FS

// catalogFile is the embedded catalog, written by go generate.
const catalogFile = "toolc.catalog.json"

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `ADDR`")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, ln, log.Default()); err != nil {
		log.Fatal(err)
	}
}

// run serves on ln until ctx ends, then shuts down as toolc serve does,
// on toolc serve's own path (serve.Run): it takes no new calls, gives the
// calls in flight up to ten seconds to finish, and closes the connections
// once their answers are out.
func run(ctx context.Context, ln net.Listener, logger *log.Logger) error {
	cat, err := catalog.Load(catalogFS, catalogFile) // checks the fingerprints
	if err != nil {
		return err
	}
	rt := runtime.New(runtime.Options{CallTimeout: 10 * time.Second})
	// One dispatcher per service of the catalog: here the notes service,
	// in process. Swap refuses a catalog tool without a handler.
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{
		"notes": runtime.Local(notes.Handlers(notes.New())...),
	}); err != nil {
		return err
	}
	logger.Printf("serving %d tools of catalog %s: MCP on http://%s/mcp, calls on http://%s/v1/call",
		len(cat.ToolNames()), cat.Fingerprint, ln.Addr(), ln.Addr())
	return serve.Run(ctx, rt, serve.Options{
		Listener: ln,
		MCP:      mcpserver.Options{Name: "notes", Version: "1.0.0", ListTTL: time.Hour},
		Shutdown: runtime.ShutdownOptions{
			Grace:  10 * time.Second,
			Report: func(r runtime.ShutdownReport) { logger.Print(r) },
		},
	})
}
