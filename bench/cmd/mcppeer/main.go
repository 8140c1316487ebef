// Command mcppeer serves the serving comparison's query_weather tool
// (bench/serving/weather) from one of the servers that package serving
// compares, over Streamable HTTP or stdio:
//
//   - floor: net/http and encoding/json, no MCP library: the least any Go
//     MCP server can do for a call; with -plugin, the tool in a go-plugin
//     process (bench/cmd/floorplugin), the least any Go server with a
//     plugin hop can do;
//   - mcpgo: mark3labs/mcp-go, with its input validation on;
//   - gosdk: the go-sdk reference, in the mode each revision needs
//     (stateless for 2026-07-28, sessions before);
//   - toolc: toolc's runtime, MCP and HTTP packages with the handler in
//     process (runtime.Local), as a service that embeds its catalog serves.
//
// With -http it prints the endpoint's URL as its first line of output;
// with -stdio it serves its standard input and output.
//
//	go run ./bench/cmd/mcppeer -server mcpgo -http 127.0.0.1:0
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/bench/serving/floorplugin"
	"github.com/toolc/toolc/bench/serving/weather"
	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

func main() {
	server := flag.String("server", "", "floor, mcpgo, gosdk or toolc")
	addr := flag.String("http", "", "serve Streamable HTTP on this address (127.0.0.1:0 picks a port)")
	stdio := flag.Bool("stdio", false, "serve stdio")
	catFile := flag.String("catalog", "", "for -server toolc: the catalog of bench/serving/testdata/weather, from toolc build")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	pluginPath := flag.String("plugin", "", "for -server floor: call the tool in this floorplugin binary (bench/cmd/floorplugin)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcppeer:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, *server, *addr, *stdio, *catFile, *pluginPath); err != nil {
		fmt.Fprintln(os.Stderr, "mcppeer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, server, addr string, stdio bool, catFile, pluginPath string) error {
	if (addr == "") == !stdio {
		return errors.New("give -http ADDR or -stdio")
	}
	var h http.Handler
	var serveStdio func(context.Context) error
	switch server {
	case "floor":
		var plugin *floorplugin.Client
		if pluginPath != "" {
			var err error
			if plugin, err = floorplugin.Start(pluginPath); err != nil {
				return err
			}
			defer plugin.Kill()
		}
		h = floorHTTP(plugin)
		serveStdio = func(ctx context.Context) error { return floorStdio(ctx, plugin) }
	case "mcpgo":
		s := mcpGoServer()
		h = mcpgoserver.NewStreamableHTTPServer(s)
		serveStdio = func(ctx context.Context) error {
			return mcpgoserver.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout)
		}
	case "gosdk":
		s := goSDKServer()
		h = goSDKHTTP(s)
		serveStdio = func(ctx context.Context) error { return s.Run(ctx, &mcp.StdioTransport{}) }
	case "toolc":
		rt, srv, err := toolcServer(catFile)
		if err != nil {
			return err
		}
		h = httpapi.NewHandler(rt, srv, httpapi.Options{})
		serveStdio = func(ctx context.Context) error {
			mcpserver.ServeStdio(ctx, rt, srv, os.Stdin, os.Stdout, mcpserver.StdioOptions{})
			return nil
		}
	default:
		return fmt.Errorf("unknown -server %q: floor, mcpgo, gosdk or toolc", server)
	}
	if stdio {
		return serveStdio(ctx)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	hs := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// mcpGoServer is query_weather on mcp-go, with the input validation that
// mcp-go leaves off by default (toolc always validates).
func mcpGoServer() *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("mcpgo", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithInputSchemaValidation())
	tool := mcpgo.NewToolWithRawSchema(weather.Name, weather.Description, json.RawMessage(weather.InputSchema))
	s.AddTool(tool, func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		// mcp-go validates but applies no defaults: the handler does.
		in := weather.Request{Days: 3, Unit: "celsius"}
		if err := req.BindArguments(&in); err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		out := weather.Answer(in)
		text, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		return mcpgo.NewToolResultStructured(out, string(text)), nil
	})
	return s
}

// goSDKServer is query_weather on go-sdk, whose typed tools validate the
// arguments and apply their defaults.
func goSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: weather.Name, Description: weather.Description, InputSchema: json.RawMessage(weather.InputSchema)},
		func(_ context.Context, _ *mcp.CallToolRequest, in weather.Request) (*mcp.CallToolResult, weather.Response, error) {
			return nil, weather.Answer(in), nil
		})
	return s
}

// goSDKHTTP serves s in go-sdk's stateless mode for 2026-07-28, which is
// the only mode in which go-sdk speaks it, and with sessions before.
func goSDKHTTP(s *mcp.Server) http.Handler {
	get := func(*http.Request) *mcp.Server { return s }
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	sessions := mcp.NewStreamableHTTPHandler(get, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
		} else {
			sessions.ServeHTTP(w, r)
		}
	})
}

// toolcServer is toolc's runtime with query_weather in process, and its MCP
// server.
func toolcServer(catFile string) (*runtime.Runtime, *mcpserver.Server, error) {
	if catFile == "" {
		return nil, nil, errors.New("-server toolc needs -catalog")
	}
	cat, err := catalog.Load(os.DirFS(filepath.Dir(catFile)), filepath.Base(catFile))
	if err != nil {
		return nil, nil, err
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"weather": runtime.Local(weather.Handler())}); err != nil {
		return nil, nil, err
	}
	return rt, mcpserver.New(rt, mcpserver.Options{}), nil
}
