package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/reqstate"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
)

const defaultHTTPAddr = "127.0.0.1:8931"

// serveListTTL is the ttlMs of toolc serve's tools/list. The list cannot
// change before the process ends; an hour bounds how long a client keeps
// the old list after a redeploy, and a client that calls a tool the new
// catalog dropped gets an error, on which the spec lets it re-fetch early.
const serveListTTL = time.Hour

// serveFlags are the flags that serve and dev share.
type serveFlags struct {
	stdio        *bool
	addr         *string
	token        *string
	allowOrigins *string
	stateless    *bool
	timeout      *time.Duration
	grace        *time.Duration
	insecure     *bool
	stateKey     *string
	maxSessions  *int
	sessionIdle  *time.Duration
	ssePoll      *time.Duration
	maxConns     *int
	readTimeout  *time.Duration
	writeTimeout *time.Duration
	idleTimeout  *time.Duration
	maxStreams   *int
	callerStream *int
	authIssuer   *string
	authResource *string
	auditArgs    *bool
	taskStore    *string
	taskTimeout  *time.Duration
	taskTTL      *time.Duration
	// oauth is the verifier that checkAuth made for --auth-issuer.
	oauth *oauth.Verifier
	// tasks runs the calls of task tools (openTasks).
	tasks *tasks.Manager
}

func addServeFlags(fs interface {
	Bool(string, bool, string) *bool
	String(string, string, string) *string
	Duration(string, time.Duration, string) *time.Duration
	Int(string, int, string) *int
}) serveFlags {
	return serveFlags{
		stdio:        fs.Bool("stdio", false, "serve MCP on standard input and output instead of HTTP"),
		addr:         fs.String("http", defaultHTTPAddr, "serve MCP and the function-call API on `ADDR`"),
		token:        fs.String("token", "", "require this bearer token on /mcp, /v1/ and /metrics (default $TOOLC_TOKEN)"),
		allowOrigins: fs.String("allow-origin", "", "comma-separated browser `origins` allowed besides the server's own"),
		stateless:    fs.Bool("stateless", false, "serve MCP without sessions, for replicas behind a load balancer"),
		timeout:      fs.Duration("timeout", 30*time.Second, "bound on one tool call"),
		grace:        fs.Duration("grace", 10*time.Second, "on SIGTERM or SIGINT, how long calls in flight may take to finish before the handlers are stopped"),
		insecure:     fs.Bool("insecure", false, "serve a non-loopback --http address without --token"),
		stateKey:     fs.String("state-key-file", "", "seal the requestState of calls that ask the client with the key in `FILE` (default $TOOLC_STATE_KEY, else a key made at start); replicas share one"),
		maxSessions:  fs.Int("max-sessions", mcpserver.DefaultMaxSessions, "cap on live MCP sessions; past it the least recently used idle one is closed (-1: no cap)"),
		sessionIdle:  fs.Duration("session-idle", mcpserver.DefaultSessionIdleTimeout, "close an MCP session with no request for this long (-1s: never)"),
		ssePoll:      fs.Duration("sse-poll-after", 0, "close, once, the SSE stream of a 2025-11-25 session's call still running after this long; the client resumes it (0: never)"),
		maxConns:     fs.Int("max-conns", httpapi.DefaultMaxConns, "cap on open HTTP connections (-1: no cap)"),
		readTimeout:  fs.Duration("read-timeout", httpapi.DefaultReadTimeout, "bound on reading a request's header and body"),
		writeTimeout: fs.Duration("write-timeout", httpapi.DefaultWriteTimeout, "bound on writing a response, on top of --timeout for calls, and on each write to a notification stream"),
		maxStreams:   fs.Int("max-streams", mcpserver.DefaultMaxStreams, "cap on open MCP notification streams, at most half of --max-conns (-1: no cap but that)"),
		callerStream: fs.Int("max-caller-streams", mcpserver.DefaultMaxCallerStreams, "cap on the open MCP notification streams of one caller: its OAuth subject, or its IP address (-1: no cap)"),
		idleTimeout:  fs.Duration("idle-timeout", httpapi.DefaultIdleTimeout, "close a kept-alive connection idle for this long"),
		authIssuer:   fs.String("auth-issuer", "", "take OAuth access tokens from the authorization server `ISSUER` (with --auth-resource; not with --token)"),
		authResource: fs.String("auth-resource", "", "this server's OAuth resource identifier `RESOURCE`, the URL clients connect to, such as https://tools.example.com/mcp"),
		taskStore:    fs.String("task-store", "", "keep the tasks of task tools in `URL`: memory:, file:PATH or redis://HOST:PORT/DB (default memory:)"),
		taskTimeout:  fs.Duration("task-timeout", tasks.DefaultTimeout, "bound on the call of a task, in place of --timeout"),
		taskTTL:      fs.Duration("task-ttl", tasks.DefaultTTL, "keep a task, and its result, this long after it starts"),
		auditArgs:    fs.Bool("audit-args", false, "with --auth-issuer, add each call's arguments to its audit line (they are the users' data: off by default)"),
	}
}

// tokenFromEnv takes the token from $TOOLC_TOKEN when --token was not
// given. It is read after the flags are parsed, never as --token's
// default: the flag package prints a default in -h and in every usage
// error, and the token would go to the terminal, or a CI log, with it.
func tokenFromEnv(fs *flag.FlagSet, sf *serveFlags) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "token" })
	if !given {
		*sf.token = os.Getenv("TOOLC_TOKEN")
	}
}

// checkAuth checks the OAuth flags and, with --auth-issuer, discovers the
// authorization server and fetches its keys, before anything is compiled:
// an issuer that cannot be reached at start is a usage error (exit 2), not
// a server that refuses every call.
func checkAuth(e env, cmd string, sf *serveFlags) int {
	issuer, resource := *sf.authIssuer, *sf.authResource
	switch {
	case issuer == "" && resource == "" && *sf.auditArgs:
		// Only an OAuth caller has an audit line, which says who called.
		fmt.Fprintf(e.stderr, "toolc %s: --audit-args adds the arguments to the audit lines of OAuth callers; it needs --auth-issuer\n", cmd)
		return exitUsage
	case issuer == "" && resource == "":
		return exitOK
	case issuer == "" || resource == "":
		fmt.Fprintf(e.stderr, "toolc %s: --auth-issuer and --auth-resource go together: give both, or neither\n", cmd)
		return exitUsage
	case *sf.token != "":
		fmt.Fprintf(e.stderr, "toolc %s: --auth-issuer and --token (or $TOOLC_TOKEN) are two ways to guard the server; give one of them\n", cmd)
		return exitUsage
	case *sf.stdio:
		fmt.Fprintf(e.stderr, "toolc %s: --auth-issuer guards the HTTP server; with --stdio the client that starts toolc is the only caller\n", cmd)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := oauth.New(ctx, oauth.Config{Issuer: issuer, Resource: resource})
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: --auth-issuer: %v\n", cmd, err)
		return exitUsage
	}
	sf.oauth = v
	return exitOK
}

// stateSecret reads the key that seals requestState (--state-key-file,
// else $TOOLC_STATE_KEY), before anything is compiled or built; nil means
// the runtime makes one for this process.
func stateSecret(e env, cmd string, sf serveFlags) ([]byte, int) {
	secret, err := reqstate.LoadSecret(*sf.stateKey, os.Getenv("TOOLC_STATE_KEY"))
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	return secret, exitOK
}

// checkSSEPoll refuses --sse-poll-after with --stateless, whose requests
// have no session in which to resume a stream.
func checkSSEPoll(e env, cmd string, sf serveFlags) int {
	if *sf.ssePoll > 0 && *sf.stateless {
		fmt.Fprintf(e.stderr, "toolc %s: --sse-poll-after resumes the streams of sessions, and --stateless serves none; give one of them\n", cmd)
		return exitUsage
	}
	return exitOK
}

// checkExposure refuses to serve, without a token, an address that other
// machines reach, unless the user says so with --insecure: anyone who
// reaches it could call every tool. It runs before anything is compiled or
// built, so that the mistake costs nothing.
func checkExposure(e env, cmd string, sf serveFlags) int {
	if *sf.stdio || *sf.token != "" || *sf.authIssuer != "" {
		return exitOK
	}
	exposed, err := httpapi.Exposed(context.Background(), *sf.addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: --http %s: %v\n", cmd, *sf.addr, err)
		return exitUsage
	}
	switch {
	case !exposed:
	case *sf.insecure:
		fmt.Fprintf(e.stderr, "toolc %s: warning: --http %s can be reached from other machines, and with --insecure and no --token anyone who reaches it can call every tool\n", cmd, *sf.addr)
	default:
		fmt.Fprintf(e.stderr, "toolc %s: --http %s can be reached from other machines, and without a token anyone who reaches it could call every tool; "+
			"give --token (or $TOOLC_TOKEN), serve on a loopback address such as %s, or pass --insecure to serve it open anyway\n", cmd, *sf.addr, defaultHTTPAddr)
		return exitUsage
	}
	return exitOK
}

func runServe(e env, args []string) int {
	fs := newFlags(e, "serve")
	sf := addServeFlags(fs)
	catalogFile := fs.String("catalog", "", "serve a catalog built by toolc build instead of compiling contracts")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return exitStatus(e.stderr, "serve", err)
	}
	tokenFromEnv(fs, &sf)
	if status := checkAuth(e, "serve", &sf); status != exitOK {
		return status
	}
	if status := checkExposure(e, "serve", sf); status != exitOK {
		return status
	}
	if status := checkSSEPoll(e, "serve", sf); status != exitOK {
		return status
	}
	secret, status := stateSecret(e, "serve", sf)
	if status != exitOK {
		return status
	}
	tp, stopTracing, status := startTracing(e, "serve")
	if status != exitOK {
		return status
	}
	// Deferred first, so that it runs last: after the handlers, which
	// send their own spans as they stop.
	defer stopTracing()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cat, base, status := loadServable(e, "serve", *catalogFile, patterns)
	if cat == nil {
		return status
	}
	rt := runtime.New(runtime.Options{CallTimeout: *sf.timeout, Logger: logger(e), Audit: auditLogger(e), AuditArguments: *sf.auditArgs, TracerProvider: tp})
	closeTasks, status := openTasks(e, "serve", rt, &sf)
	if status != exitOK {
		return status
	}
	defer closeTasks()
	if *sf.stdio {
		return serveStdioWhileBuilding(ctx, stop, e, rt, cat, base, sf, secret)
	}
	running, status := startHandlers(ctx, e, "serve", cat, base)
	if running == nil {
		return status
	}
	// The plugins are stopped by the drain, or here if serving failed;
	// CleanupClients is the last resort for any process left.
	defer rpc.CleanupClients()
	defer host.Stop(running, 0)
	if _, err := rt.Swap(cat, host.Dispatchers(running)); err != nil {
		fmt.Fprintf(e.stderr, "toolc serve: %v\n", err)
		return exitFail
	}
	// The catalog is fixed for the life of the process: clients may keep
	// the tool list for an hour (see mcpserver.Options.ListTTL).
	srv := mcpserver.New(rt, mcpserver.Options{Version: moduleVersion(), Logger: logger(e), ListTTL: serveListTTL, StateSecret: secret, Tasks: sf.tasks})
	return serveMCP(ctx, stop, e, "serve", rt, srv, sf, func(reason string) { host.StopBecause(running, 0, reason) })
}

// serveStdioWhileBuilding is toolc serve --stdio: the session starts at
// once, so that the client's handshake is answered while the handlers
// build (clients give up within seconds; mcp-go after 5 s), and the gate
// holds tools/list and tools/call until they run. If they do not, every
// request for tools, held or later, gets an error that names the failure,
// and toolc exits 1 once the client hangs up: exiting at once raced the
// client's first tools/list, which then got no answer at all, and a desktop
// client had nothing to show.
func serveStdioWhileBuilding(ctx context.Context, stop func(), e env, rt *runtime.Runtime, cat *catalog.Catalog, base string, sf serveFlags, secret []byte) int {
	defer rpc.CleanupClients()
	srv := mcpserver.New(rt, mcpserver.Options{Version: moduleVersion(), Logger: logger(e), ListTTL: serveListTTL, StateSecret: secret, Tasks: sf.tasks})
	gate := mcpserver.NewGate()
	srv.AddReceivingMiddleware(gate.Hold)
	// The drain may come during the build, before there are handlers to
	// stop: running is set once they run.
	var mu sync.Mutex
	var running map[string]*host.Plugin
	stopHandlers := func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		if running != nil {
			host.StopBecause(running, 0, reason)
		}
	}
	served := make(chan int, 1)
	go func() {
		served <- serveMCP(ctx, stop, e, "serve", rt, srv, sf, stopHandlers)
		stop() // the client hung up: stop the build too
	}()
	ps, status := startHandlers(ctx, e, "serve", cat, base)
	if ps != nil {
		defer host.Stop(ps, 0)
		mu.Lock()
		running = ps
		mu.Unlock()
		if _, err := rt.Swap(cat, host.Dispatchers(ps)); err != nil {
			fmt.Fprintf(e.stderr, "toolc serve: %v\n", err)
			ps, status = nil, exitFail
		}
	}
	if ps == nil {
		gate.Open(errors.New("its handlers did not build or start; toolc's standard error says why"))
		cut := ctx.Err() != nil
		if s := <-served; cut {
			return s
		}
		return status
	}
	gate.Open(nil)
	return <-served
}

// serveMCP serves until ctx ends: MCP over stdio, or MCP and the
// function-call API over HTTP. Then it drains (rt.Shutdown): the transport
// stays up until the calls in flight are answered. stopSignals restores
// the signals' default action once ctx ends, so that a second SIGINT ends
// toolc at once.
func serveMCP(ctx context.Context, stopSignals func(), e env, cmd string, rt *runtime.Runtime, srv *mcp.Server, sf serveFlags, stopHandlers func(reason string)) int {
	defer context.AfterFunc(ctx, stopSignals)()
	shutdown := runtime.ShutdownOptions{Grace: *sf.grace, StopHandlers: stopHandlers, Report: func(r runtime.ShutdownReport) {
		hint := ""
		if !r.GraceOver {
			hint = " (--grace)"
		}
		fmt.Fprintf(e.stderr, "toolc %s: %s%s\n", cmd, r, hint)
	}}
	if *sf.stdio {
		mcpserver.ServeStdio(ctx, rt, srv, e.stdin, e.stdout, shutdown)
		return exitOK
	}
	var origins []string
	for _, o := range strings.Split(*sf.allowOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	// Notification streams stay open: they may take at most half of the
	// connections, so that calls always have the rest.
	maxStreams := *sf.maxStreams
	if conns := *sf.maxConns; conns > 0 && (maxStreams <= 0 || maxStreams > conns/2) {
		maxStreams = max(conns/2, 1)
	}
	handler := httpapi.NewHandler(rt, srv, httpapi.Options{
		Token: *sf.token, OAuth: sf.oauth, AllowedOrigins: origins, Logger: logger(e),
		MCP: mcpserver.HTTPOptions{Stateless: *sf.stateless, MaxSessions: *sf.maxSessions, SessionIdleTimeout: *sf.sessionIdle, SSEPollAfter: *sf.ssePoll,
			MaxStreams: maxStreams, MaxCallerStreams: *sf.callerStream, StreamWriteTimeout: *sf.writeTimeout, Tasks: sf.tasks},
	})
	ln, err := net.Listen("tcp", *sf.addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: %v\n", cmd, err)
		return exitUsage
	}
	limits := httpapi.ConnLimits{
		MaxConns: *sf.maxConns, ReadTimeout: *sf.readTimeout, WriteTimeout: *sf.writeTimeout,
		IdleTimeout: *sf.idleTimeout, CallTimeout: *sf.timeout,
	}
	fmt.Fprintf(e.stderr, "toolc %s: serving MCP on http://%s/mcp and the function-call API on http://%s/v1/ (%s)\n",
		cmd, ln.Addr(), ln.Addr(), plural(len(rt.Snapshot().Tools()), "tool"))
	if err := httpapi.Serve(ctx, ln, rt, handler, httpapi.ServeOptions{Limits: limits, Shutdown: shutdown}); err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: %v\n", cmd, err)
		return exitFail
	}
	return exitOK
}

// loadServable loads the catalog to serve and the directory its services'
// dirs are relative to.
func loadServable(e env, cmd, file string, patterns []string) (*catalog.Catalog, string, int) {
	cat, err := loadCatalog(e, cmd, file, patterns)
	if err != nil {
		return nil, "", exitStatus(e.stderr, cmd, err)
	}
	base := "."
	if file != "" {
		base = filepath.Dir(file)
	}
	return cat, base, exitOK
}

// startHandlers builds and starts every service's handler plugin.
func startHandlers(ctx context.Context, e env, cmd string, cat *catalog.Catalog, base string) (map[string]*host.Plugin, int) {
	cache, err := host.CacheDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	bins, err := host.BuildAll(ctx, cache, base, cat)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: %v\n", cmd, err)
		return nil, exitFail
	}
	ps, err := host.Start(ctx, bins, host.Options{Stderr: e.stderr, Logger: logger(e)})
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc %s: %v\n", cmd, err)
		return nil, exitFail
	}
	return ps, exitOK
}

// auditLogger writes the audit lines of OAuth calls on stderr, whatever
// TOOLC_DEBUG says.
func auditLogger(e env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, nil))
}

func logger(e env) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("TOOLC_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

func runCall(e env, args []string) int {
	fs := newFlags(e, "call")
	catalogFile := fs.String("catalog", "", "use a catalog built by toolc build instead of compiling contracts")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on the call")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitStatus(e.stderr, "call", err)
	}
	var argsJSON []byte
	if n := len(rest); n > 0 && looksLikeJSON(rest[n-1]) {
		argsJSON, rest = []byte(rest[n-1]), rest[:n-1]
	}
	if len(rest) == 0 {
		fmt.Fprintln(e.stderr, "usage: toolc "+usageLine(fs))
		return exitUsage
	}
	tool, patterns := rest[len(rest)-1], rest[:len(rest)-1]
	if argsJSON == nil {
		if f, ok := e.stdin.(*os.File); ok && isTerminal(f) {
			argsJSON = []byte("{}")
		} else if data, err := inputfile.ReadAll(e.stdin, "standard input"); err != nil {
			fmt.Fprintf(e.stderr, "toolc call: %v\n", err)
			return exitUsage
		} else if argsJSON = data; len(strings.TrimSpace(string(argsJSON))) == 0 {
			argsJSON = []byte("{}")
		}
	}
	tp, stopTracing, status := startTracing(e, "call")
	if status != exitOK {
		return status
	}
	defer stopTracing()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cat, base, status := loadServable(e, "call", *catalogFile, patterns)
	if cat == nil {
		return status
	}
	if cat, status = catalogWithTool(e, cat, tool); cat == nil {
		return status
	}
	running, status := startHandlers(ctx, e, "call", cat, base)
	if running == nil {
		return status
	}
	defer host.Stop(running, time.Second)
	defer rpc.CleanupClients()
	rt := runtime.New(runtime.Options{CallTimeout: *timeout, Logger: logger(e), TracerProvider: tp})
	if _, err := rt.Swap(cat, host.Dispatchers(running)); err != nil {
		fmt.Fprintf(e.stderr, "toolc call: %v\n", err)
		return exitFail
	}
	res, err := rt.Call(ctx, tool, argsJSON)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolc call: %v\n", err)
		return exitUsage
	}
	out := httpapi.CallResponse{Content: mcpserver.ToContent(res.Content), StructuredContent: res.StructuredContent, IsError: res.IsError}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(out)
	if res.IsError {
		return exitFail
	}
	return exitOK
}

// catalogWithTool narrows the catalog to the service of one tool, named by
// function name or MCP name, so that toolc call builds one handler.
func catalogWithTool(e env, cat *catalog.Catalog, name string) (*catalog.Catalog, int) {
	for svc, t := range cat.Tools() {
		if t.Name == name || t.ExposedMCPName(svc.Name) == name {
			return &catalog.Catalog{Services: []*catalog.Service{svc}}, exitOK
		}
	}
	fmt.Fprintf(e.stderr, "toolc call: unknown tool %q; the catalog has %s\n", name, strings.Join(cat.ToolNames(), ", "))
	return nil, exitUsage
}

func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "\"") || s == "null"
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
