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
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolc/toolc/bundle"
	"github.com/toolc/toolc/host"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/cliflag"
	"github.com/toolc/toolc/internal/inputfile"
	"github.com/toolc/toolc/internal/reqstate"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/serve"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/upstream"
)

const defaultHTTPAddr = "127.0.0.1:8931"

// serveListTTL is the ttlMs of toolc serve's tools/list. The list cannot
// change before the process ends; an hour bounds how long a client keeps
// the old list after a redeploy, and a client that calls a tool the new
// catalog dropped gets an error, on which the spec lets it re-fetch early.
const serveListTTL = time.Hour

// serveFlags are the flags that serve and dev share, most of them bound
// to the serve.Options they set.
type serveFlags struct {
	opts                                serve.Options
	stdio, insecure, auditArgs          bool
	addr, token, stateKey, allowOrigins string
	authIssuer, authResource            string
	timeout, grace                      time.Duration
	taskStore                           string
	taskTimeout, taskTTL                time.Duration
	// contentDir is where the files that prompts, resources and skills
	// serve are read from: a bundle's directory, or "" for the working
	// directory (mcpserver.Options.ContentDir).
	contentDir string
	// oauth is the verifier that checkAuth made for --auth-issuer.
	oauth *oauth.Verifier
	// tasks runs the calls of task tools (openTasks).
	tasks *tasks.Manager
}

func addServeFlags(fs *flag.FlagSet) *serveFlags {
	sf := &serveFlags{}
	mcp, limits := &sf.opts.HTTP.MCP, &sf.opts.Limits
	limits.MaxBodyMemory = httpapi.DefaultMaxBodyMemory
	fs.Var((*cliflag.Size)(&limits.MaxBodyMemory), "max-body-memory", "bound on the memory that the request bodies in flight hold at once, past the first 64KiB of each (`SIZE`, as 256MiB; -1: no bound)")
	fs.BoolVar(&sf.stdio, "stdio", false, "serve MCP on standard input and output instead of HTTP")
	fs.StringVar(&sf.addr, "http", defaultHTTPAddr, "serve MCP and the function-call API on `ADDR`")
	fs.StringVar(&sf.token, "token", "", "require this bearer token on /mcp, /v1/ and /metrics (default $TOOLC_TOKEN)")
	fs.StringVar(&sf.allowOrigins, "allow-origin", "", "comma-separated browser `origins` allowed besides the server's own")
	fs.BoolVar(&mcp.Stateless, "stateless", false, "serve MCP without sessions, for replicas behind a load balancer")
	fs.DurationVar(&sf.timeout, "timeout", 30*time.Second, "bound on one tool call")
	fs.DurationVar(&sf.grace, "grace", 10*time.Second, "on SIGTERM or SIGINT, how long calls in flight may take to finish before the handlers are stopped")
	fs.BoolVar(&sf.insecure, "insecure", false, "serve a non-loopback --http address without --token, and reach an upstream url over plain http beyond loopback")
	fs.StringVar(&sf.stateKey, "state-key-file", "", "seal the requestState of calls that ask the client with the key in `FILE` (default $TOOLC_STATE_KEY, else a key made at start); replicas share one")
	fs.IntVar(&mcp.MaxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "cap on live MCP sessions; past it the least recently used idle one is closed (-1: no cap)")
	fs.DurationVar(&mcp.SessionIdleTimeout, "session-idle", mcpserver.DefaultSessionIdleTimeout, "close an MCP session with no request for this long (-1s: never)")
	fs.DurationVar(&mcp.SSEPollAfter, "sse-poll-after", 0, "close, once, the SSE stream of a 2025-11-25 session's call still running after this long; the client resumes it (0: never)")
	fs.IntVar(&limits.MaxConns, "max-conns", httpapi.DefaultMaxConns, "cap on open HTTP connections (-1: no cap)")
	fs.DurationVar(&limits.ReadTimeout, "read-timeout", httpapi.DefaultReadTimeout, "bound on reading a request's header and body")
	fs.DurationVar(&limits.WriteTimeout, "write-timeout", httpapi.DefaultWriteTimeout, "bound on writing a response, on top of --timeout for calls, and on each write to a notification stream")
	fs.IntVar(&mcp.MaxStreams, "max-streams", mcpserver.DefaultMaxStreams, "cap on open MCP notification streams, at most half of --max-conns (-1: no cap but that)")
	fs.IntVar(&mcp.MaxCallerStreams, "max-caller-streams", mcpserver.DefaultMaxCallerStreams, "cap on the open MCP notification streams of one caller: its OAuth subject, or its IP address (-1: no cap)")
	fs.DurationVar(&limits.IdleTimeout, "idle-timeout", httpapi.DefaultIdleTimeout, "close a kept-alive connection idle for this long")
	fs.StringVar(&sf.authIssuer, "auth-issuer", "", "take OAuth access tokens from the authorization server `ISSUER` (with --auth-resource; not with --token)")
	fs.StringVar(&sf.authResource, "auth-resource", "", "this server's OAuth resource identifier `RESOURCE`, the URL clients connect to, such as https://tools.example.com/mcp")
	fs.StringVar(&sf.taskStore, "task-store", "", "keep the tasks of task tools in `URL`: memory:, file:PATH or redis://HOST:PORT/DB (default: serve, a file in the state directory for its address; dev and --stdio, memory:)")
	fs.DurationVar(&sf.taskTimeout, "task-timeout", tasks.DefaultTimeout, "bound on the call of a task, in place of --timeout")
	fs.DurationVar(&sf.taskTTL, "task-ttl", tasks.DefaultTTL, "keep a task, and its result, this long after it starts")
	fs.BoolVar(&sf.auditArgs, "audit-args", false, "with --auth-issuer, add each call's arguments to its audit line (they are the users' data: off by default)")
	return sf
}

// tokenFromEnv takes the token from $TOOLC_TOKEN when --token was not
// given. It is read after the flags are parsed, never as --token's
// default: the flag package prints a default in -h and in every usage
// error, and the token would go to the terminal, or a CI log, with it.
func tokenFromEnv(fs *flag.FlagSet, sf *serveFlags) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "token" })
	if !given {
		sf.token = os.Getenv("TOOLC_TOKEN")
	}
}

// checkAuth checks the OAuth flags and, with --auth-issuer, discovers the
// authorization server and fetches its keys, before anything is compiled:
// an issuer that cannot be reached at start is a usage error (exit 2), not
// a server that refuses every call.
func checkAuth(sf *serveFlags) error {
	issuer, resource := sf.authIssuer, sf.authResource
	switch {
	case issuer == "" && resource == "" && sf.auditArgs:
		// Only an OAuth caller has an audit line, which says who called.
		return usagef("--audit-args adds the arguments to the audit lines of OAuth callers; it needs --auth-issuer")
	case issuer == "" && resource == "":
		return nil
	case issuer == "" || resource == "":
		return usagef("--auth-issuer and --auth-resource go together: give both, or neither")
	case sf.token != "":
		return usagef("--auth-issuer and --token (or $TOOLC_TOKEN) are two ways to guard the server; give one of them")
	case sf.stdio:
		return usagef("--auth-issuer guards the HTTP server; with --stdio the client that starts toolc is the only caller")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := oauth.New(ctx, oauth.Config{Issuer: issuer, Resource: resource})
	if err != nil {
		return usagef("--auth-issuer: %v", err)
	}
	sf.oauth = v
	return nil
}

// checkSSEPoll refuses --sse-poll-after with --stateless, whose requests
// have no session in which to resume a stream.
func checkSSEPoll(sf *serveFlags) error {
	if sf.opts.HTTP.MCP.SSEPollAfter > 0 && sf.opts.HTTP.MCP.Stateless {
		return usagef("--sse-poll-after resumes the streams of sessions, and --stateless serves none; give one of them")
	}
	return nil
}

// checkExposure refuses to serve, without a token, an address that other
// machines reach, unless the user says so with --insecure: anyone who
// reaches it could call every tool. It runs before anything is compiled or
// built, so that the mistake costs nothing.
func checkExposure(e env, cmd string, sf *serveFlags) error {
	if sf.stdio || sf.token != "" || sf.authIssuer != "" {
		return nil
	}
	exposed, err := httpapi.Exposed(context.Background(), sf.addr)
	if err != nil {
		return usagef("--http %s: %v", sf.addr, err)
	}
	switch {
	case !exposed:
	case sf.insecure:
		fmt.Fprintf(e.stderr, "toolc %s: warning: --http %s can be reached from other machines, and with --insecure and no --token anyone who reaches it can call every tool\n", cmd, sf.addr)
	default:
		return usagef("--http %s can be reached from other machines, and without a token anyone who reaches it could call every tool; "+
			"give --token (or $TOOLC_TOKEN), serve on a loopback address such as %s, or pass --insecure to serve it open anyway", sf.addr, defaultHTTPAddr)
	}
	return nil
}

// serveTools is the start-up that toolc serve and toolc dev share: it
// checks their flags, takes the port, starts tracing, makes the runtime,
// gets the tools running with start, and serves them with serve.Run until
// a signal or, over stdio, the client's hang-up, and drains.
func serveTools(e env, cmd string, sf *serveFlags, listTTL time.Duration, start func(ctx context.Context, rt *runtime.Runtime, gate *mcpserver.Gate) (*serve.Tools, error)) error {
	if err := checkAuth(sf); err != nil {
		return err
	}
	if err := checkExposure(e, cmd, sf); err != nil {
		return err
	}
	if err := checkSSEPoll(sf); err != nil {
		return err
	}
	// The key that seals requestState (--state-key-file, else
	// $TOOLC_STATE_KEY), read before anything is compiled or built; nil
	// means the MCP server makes one for this process.
	secret, err := reqstate.LoadSecret(sf.stateKey, os.Getenv("TOOLC_STATE_KEY"))
	if err != nil {
		return usageErr(err)
	}
	// The port is taken before anything is compiled or built, so that a
	// port in use is said at once, not after the handler build.
	var ln net.Listener
	if !sf.stdio {
		if ln, err = net.Listen("tcp", sf.addr); err != nil {
			return usageErr(err)
		}
		defer ln.Close()
	}
	tp, stopTracing, err := startTracing(e, cmd)
	if err != nil {
		return err
	}
	// Deferred first, so that it runs last: after the handlers, which
	// send their own spans as they stop.
	defer stopTracing()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Once a signal came, the signals' default action is back, so that a
	// second SIGINT ends toolc at once.
	defer context.AfterFunc(ctx, stop)()
	// The last resort for any plugin process left.
	defer rpc.CleanupClients()

	rt := runtime.New(runtime.Options{CallTimeout: sf.timeout, Logger: logger(e), Audit: auditLogger(e), AuditArguments: sf.auditArgs, TracerProvider: tp})
	closeTasks, err := openTasks(e, cmd, rt, sf, ln)
	if err != nil {
		return err
	}
	defer closeTasks()
	gate := mcpserver.NewGate()
	t, err := start(ctx, rt, gate)
	if err != nil {
		return err
	}
	o := &sf.opts
	o.Listener, o.Stdin, o.Stdout, o.Gate, o.Tools = ln, e.stdin, e.stdout, gate, *t
	o.MCP = mcpserver.Options{Version: moduleVersion(), Logger: logger(e), ListTTL: listTTL, StateSecret: secret, Tasks: sf.tasks, ContentDir: sf.contentDir}
	o.HTTP.MCP.Tasks = sf.tasks
	o.HTTP.Token, o.HTTP.OAuth, o.HTTP.AllowedOrigins, o.HTTP.Logger = sf.token, sf.oauth, cliflag.List(sf.allowOrigins), logger(e)
	o.HTTP.MCP.StreamWriteTimeout, o.Limits.CallTimeout = o.Limits.WriteTimeout, sf.timeout
	// Notification streams stay open: they may take at most half of the
	// connections, so that calls always have the rest.
	if conns, streams := o.Limits.MaxConns, &o.HTTP.MCP.MaxStreams; conns > 0 && (*streams <= 0 || *streams > conns/2) {
		*streams = max(conns/2, 1)
	}
	o.Shutdown = runtime.ShutdownOptions{Grace: sf.grace, Report: func(r runtime.ShutdownReport) {
		hint := ""
		if !r.GraceOver {
			hint = " (--grace)"
		}
		fmt.Fprintf(e.stderr, "toolc %s: %s%s\n", cmd, r, hint)
	}}
	// Said now, not as toolc exits: the answer of the held requests
	// points at standard error, and serving may go on
	// (serve.Tools.ServeFailure).
	o.LoadFailed = func(err error) error { return exitWith(exitStatus(e.stderr, cmd, err)) }
	// Where toolc serves, once its first load is over, and how many
	// tools; nothing with --stdio, whose client knows.
	o.Serving = func(addr net.Addr, loadErr error) {
		what := plural(len(rt.Snapshot().Tools()), "tool")
		if loadErr != nil {
			what = "no tools: the load failed, and clients are told why"
		}
		if addr != nil {
			fmt.Fprintf(e.stderr, "toolc %s: serving MCP on http://%s/mcp and the function-call API on http://%s/v1/ (%s)\n", cmd, addr, addr, what)
		}
		if loadErr != nil {
			fmt.Fprintf(e.stderr, "toolc %s: no tools to serve: every client is told why until toolc is stopped (over stdio, until the client hangs up), and then it exits 1\n", cmd)
		}
	}
	err = serve.Run(ctx, rt, *o)
	var ee *exitError
	if err != nil && !errors.As(err, &ee) {
		return failf("%w", err) // the HTTP server failed
	}
	return err
}

func runServe(e env, args []string) error {
	fs := newFlags(e, "serve")
	sf := addServeFlags(fs)
	catalogFile := fs.String("catalog", "", "serve a catalog built by toolc build instead of compiling contracts (the catalog of a bundle: that bundle)")
	bundleDir := fs.String("bundle", "", "serve the bundle in `DIR` that toolc bundle wrote: its catalog and prebuilt handlers, each checked against its sha256, with no go command")
	patterns, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *bundleDir != "" && (*catalogFile != "" || len(patterns) > 0) {
		return usagef("give --bundle, --catalog or patterns: one of them")
	}
	tokenFromEnv(fs, sf)
	// A bundle carries the files its prompts, resources and skills serve,
	// relative to itself.
	sf.contentDir = *bundleDir
	if d, ok := bundle.OfCatalog(*catalogFile); ok && *catalogFile != "" {
		sf.contentDir = d
	}
	// The catalog is fixed for the life of the process: clients may keep
	// the tool list for an hour (see mcpserver.Options.ListTTL).
	return serveTools(e, "serve", sf, serveListTTL, func(ctx context.Context, rt *runtime.Runtime, _ *mcpserver.Gate) (*serve.Tools, error) {
		src, err := loadServable(e, "serve", *bundleDir, *catalogFile, patterns)
		if err != nil {
			return nil, err
		}
		// The drain may come during the build, before there are handlers
		// to stop.
		var running host.Handlers
		metrics := &upstream.Metrics{}
		sf.opts.HTTP.Collectors = []prometheus.Collector{metrics}
		return &serve.Tools{
			Load: func(ctx context.Context) error {
				err := loadHandlers(ctx, e, src, rt, sf.insecure, &running)
				metrics.Use(running.Upstreams())
				return err
			},
			ServeFailure: true,
			// A stdio client initializes during the handlers' build.
			Declared: mcpserver.FeaturesOf(src.Catalog),
			Stop:     running.Stop,
			// The handlers are stopped by the drain, or here if serving
			// failed.
			Close: func() { running.Stop("its handler was stopped") },
		}, nil
	})
}

// loadServable loads the bundle in dir, the catalog file, or the
// contracts of patterns. The catalog of a bundle is served as that bundle,
// with its prebuilt handlers: nothing is built.
func loadServable(e env, cmd, dir, file string, patterns []string) (*host.Source, error) {
	if dir == "" && file != "" {
		if d, ok := bundle.OfCatalog(file); ok {
			dir = d
		}
	}
	if dir != "" {
		b, err := bundle.Load(dir)
		if err != nil {
			return nil, err
		}
		return &host.Source{Catalog: b.Catalog, Binaries: b.Binaries}, nil
	}
	cat, err := loadCatalog(e, cmd, file, patterns)
	if err != nil {
		return nil, err
	}
	base := "."
	if file != "" {
		base = filepath.Dir(file)
	}
	return &host.Source{Catalog: cat, Base: base}, nil
}

// loadHandlers starts the handler plugins (building them unless they are
// a bundle's) and the upstream servers of src's services into hs, and
// swaps src's catalog into rt with them (host.Handlers.Load).
func loadHandlers(ctx context.Context, e env, src *host.Source, rt *runtime.Runtime, insecure bool, hs *host.Handlers) error {
	var cache string
	if src.Binaries == nil {
		var err error
		if cache, err = host.CacheDir(); err != nil {
			return usageErr(err)
		}
	}
	err := hs.Load(ctx, rt, src, cache, host.Options{Stderr: e.stderr, Logger: logger(e)}, upstream.Options{Stderr: e.stderr, Logger: logger(e), Insecure: insecure})
	if err != nil {
		return failf("%w", err)
	}
	return nil
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

func runCall(e env, args []string) error {
	fs := newFlags(e, "call")
	catalogFile := fs.String("catalog", "", "use a catalog built by toolc build instead of compiling contracts")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on the call")
	insecure := fs.Bool("insecure", false, "reach an upstream url over plain http beyond loopback")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	var argsJSON []byte
	if n := len(rest); n > 0 && looksLikeJSON(rest[n-1]) {
		argsJSON, rest = []byte(rest[n-1]), rest[:n-1]
	}
	if len(rest) == 0 {
		return usageLineErr(fs)
	}
	tool, patterns := rest[len(rest)-1], rest[:len(rest)-1]
	if argsJSON == nil {
		if argsJSON, err = inputfile.ReadJSONArgs(e.stdin); err != nil {
			return usageErr(err)
		}
	}
	tp, stopTracing, err := startTracing(e, "call")
	if err != nil {
		return err
	}
	defer stopTracing()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	all, err := loadServable(e, "call", "", *catalogFile, patterns)
	if err != nil {
		return err
	}
	src := all.Only(tool)
	if src == nil {
		return usagef("unknown tool %q; the catalog has %s", tool, strings.Join(all.Catalog.ToolNames(), ", "))
	}
	rt := runtime.New(runtime.Options{CallTimeout: *timeout, Logger: logger(e), TracerProvider: tp})
	var running host.Handlers
	defer running.Stop("toolc call ended")
	defer rpc.CleanupClients()
	if err := loadHandlers(ctx, e, src, rt, *insecure, &running); err != nil {
		return err
	}
	res, err := rt.Call(ctx, tool, argsJSON)
	if err != nil {
		return usageErr(err)
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(httpapi.ResponseOf(res))
	if res.IsError {
		return exitWith(exitFail)
	}
	return nil
}

func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "\"") || s == "null"
}
