package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolc/toolc/bundle"
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
	"github.com/toolc/toolc/upstream"
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
	maxBodyMem   *sizeFlag
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
	Var(flag.Value, string, string)
}) serveFlags {
	maxBodyMem := sizeFlag(httpapi.DefaultMaxBodyMemory)
	fs.Var(&maxBodyMem, "max-body-memory", "bound on the memory that the request bodies in flight hold at once, past the first 64KiB of each (`SIZE`, as 256MiB; -1: no bound)")
	return serveFlags{
		maxBodyMem:   &maxBodyMem,
		stdio:        fs.Bool("stdio", false, "serve MCP on standard input and output instead of HTTP"),
		addr:         fs.String("http", defaultHTTPAddr, "serve MCP and the function-call API on `ADDR`"),
		token:        fs.String("token", "", "require this bearer token on /mcp, /v1/ and /metrics (default $TOOLC_TOKEN)"),
		allowOrigins: fs.String("allow-origin", "", "comma-separated browser `origins` allowed besides the server's own"),
		stateless:    fs.Bool("stateless", false, "serve MCP without sessions, for replicas behind a load balancer"),
		timeout:      fs.Duration("timeout", 30*time.Second, "bound on one tool call"),
		grace:        fs.Duration("grace", 10*time.Second, "on SIGTERM or SIGINT, how long calls in flight may take to finish before the handlers are stopped"),
		insecure:     fs.Bool("insecure", false, "serve a non-loopback --http address without --token, and reach an upstream url over plain http beyond loopback"),
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
		taskStore:    fs.String("task-store", "", "keep the tasks of task tools in `URL`: memory:, file:PATH or redis://HOST:PORT/DB (default: serve, a file in the state directory for its address; dev, memory:)"),
		taskTimeout:  fs.Duration("task-timeout", tasks.DefaultTimeout, "bound on the call of a task, in place of --timeout"),
		taskTTL:      fs.Duration("task-ttl", tasks.DefaultTTL, "keep a task, and its result, this long after it starts"),
		auditArgs:    fs.Bool("audit-args", false, "with --auth-issuer, add each call's arguments to its audit line (they are the users' data: off by default)"),
	}
}

// sizeFlag is a flag of a size in bytes, written as inputfile.ParseSize
// reads one (256MiB); -1 is no bound.
type sizeFlag int64

func (s *sizeFlag) String() string {
	if *s < 0 {
		return "-1"
	}
	return inputfile.FormatSize(int64(*s))
}

func (s *sizeFlag) Set(v string) error {
	if v == "-1" {
		*s = -1
		return nil
	}
	n, err := inputfile.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
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
func checkAuth(sf *serveFlags) error {
	issuer, resource := *sf.authIssuer, *sf.authResource
	switch {
	case issuer == "" && resource == "" && *sf.auditArgs:
		// Only an OAuth caller has an audit line, which says who called.
		return usagef("--audit-args adds the arguments to the audit lines of OAuth callers; it needs --auth-issuer")
	case issuer == "" && resource == "":
		return nil
	case issuer == "" || resource == "":
		return usagef("--auth-issuer and --auth-resource go together: give both, or neither")
	case *sf.token != "":
		return usagef("--auth-issuer and --token (or $TOOLC_TOKEN) are two ways to guard the server; give one of them")
	case *sf.stdio:
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
	if *sf.ssePoll > 0 && *sf.stateless {
		return usagef("--sse-poll-after resumes the streams of sessions, and --stateless serves none; give one of them")
	}
	return nil
}

// checkExposure refuses to serve, without a token, an address that other
// machines reach, unless the user says so with --insecure: anyone who
// reaches it could call every tool. It runs before anything is compiled or
// built, so that the mistake costs nothing.
func checkExposure(e env, cmd string, sf *serveFlags) error {
	if *sf.stdio || *sf.token != "" || *sf.authIssuer != "" {
		return nil
	}
	exposed, err := httpapi.Exposed(context.Background(), *sf.addr)
	if err != nil {
		return usagef("--http %s: %v", *sf.addr, err)
	}
	switch {
	case !exposed:
	case *sf.insecure:
		fmt.Fprintf(e.stderr, "toolc %s: warning: --http %s can be reached from other machines, and with --insecure and no --token anyone who reaches it can call every tool\n", cmd, *sf.addr)
	default:
		return usagef("--http %s can be reached from other machines, and without a token anyone who reaches it could call every tool; "+
			"give --token (or $TOOLC_TOKEN), serve on a loopback address such as %s, or pass --insecure to serve it open anyway", *sf.addr, defaultHTTPAddr)
	}
	return nil
}

// tools is how a command gets its tools running in the runtime: toolc
// serve builds and starts the catalog's handler plugins (or a bundle's)
// once, toolc dev loads its contracts and then reloads them on every
// change.
type tools struct {
	// load gets the tools running and swaps them into the runtime. An
	// error carries the exit status.
	load func(ctx context.Context) error
	// opensGate is set when load opens the gate itself, with how each
	// try went (toolc dev, whose first load may fail and a later reload
	// succeed); otherwise the gate opens when load returns.
	opensGate bool
	// serveFailure keeps serving after a load that failed, answering
	// every request for tools, held or later, with its error, until toolc
	// is stopped or the stdio client hangs up; toolc then exits with the
	// load's error (toolc serve: ending at once raced the client's first
	// tools/list, which then got no answer, and a desktop client had
	// nothing to show). Without it toolc ends at once (toolc dev).
	serveFailure bool
	// stop, if set, stops the handlers at the end of a drain, which ends
	// the calls still running with reason.
	stop func(reason string)
	// follow, if set, keeps the tools up to date once loaded (toolc dev's
	// reloads) until ctx ends; an error ends serving.
	follow func(ctx context.Context) error
	// close, if set, releases what load started.
	close func()
	// collectors are served at /metrics beside the calls' counts.
	collectors []prometheus.Collector
}

// serveTools is the start-up that toolc serve and toolc dev share: it
// checks their flags, takes the port, starts tracing, makes the runtime
// and its MCP server, gets the tools running with start, serves them (see
// serveWhileLoading) until a signal or, over stdio, the client's hang-up,
// and drains.
func serveTools(e env, cmd string, sf *serveFlags, listTTL time.Duration, start func(ctx context.Context, rt *runtime.Runtime, gate *mcpserver.Gate) (*tools, error)) error {
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
	secret, err := reqstate.LoadSecret(*sf.stateKey, os.Getenv("TOOLC_STATE_KEY"))
	if err != nil {
		return usageErr(err)
	}
	// The port is taken before anything is compiled or built, so that a
	// port in use is said at once, not after the handler build.
	var ln net.Listener
	if !*sf.stdio {
		if ln, err = net.Listen("tcp", *sf.addr); err != nil {
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
	// The last resort for any plugin process left.
	defer rpc.CleanupClients()

	rt := runtime.New(runtime.Options{CallTimeout: *sf.timeout, Logger: logger(e), Audit: auditLogger(e), AuditArguments: *sf.auditArgs, TracerProvider: tp})
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
	if t.close != nil {
		defer t.close()
	}
	srv := mcpserver.New(rt, mcpserver.Options{Version: moduleVersion(), Logger: logger(e), ListTTL: listTTL, StateSecret: secret, Tasks: sf.tasks})
	// The client that started toolc over stdio waits for the handshake,
	// and gives up within seconds (mcp-go after 5 s), while the first
	// build may take minutes; an HTTP client, or a container's health
	// check, should not meet a refused port either. The server starts at
	// once, and the gate holds tools/list and tools/call (and the
	// function-call API) until the first load is over.
	srv.AddReceivingMiddleware(gate.Hold)
	s := &server{e: e, cmd: cmd, sf: sf, rt: rt, srv: srv, gate: gate, ln: ln, collectors: t.collectors}
	return s.serveWhileLoading(ctx, stop, t)
}

// server is what serveTools serves.
type server struct {
	e    env
	cmd  string
	sf   *serveFlags
	rt   *runtime.Runtime
	srv  *mcp.Server
	gate *mcpserver.Gate
	ln   net.Listener // nil with --stdio
	// collectors are the tools' own metrics (see tools.collectors).
	collectors []prometheus.Collector
}

// serveWhileLoading serves from the start and loads the tools meanwhile.
// A load that fails ends toolc with its error (once the session is over,
// see tools.serveFailure), unless the load was cut short because the
// client hung up or a signal came: then toolc ends as the session did.
func (s *server) serveWhileLoading(ctx context.Context, stop func(), t *tools) error {
	served := make(chan error, 1)
	go func() {
		served <- s.serve(ctx, stop, t.stop)
		stop() // the client hung up: stop the load too
	}()
	err := t.load(ctx)
	if err != nil {
		s.gate.Open(err)
		if ctx.Err() != nil {
			stop()
			return <-served
		}
		// Said now, not as toolc exits: the answer of the held requests
		// points at standard error, and serving may go on
		// (serveFailure).
		err = exitWith(exitStatus(s.e.stderr, s.cmd, err))
		if !t.serveFailure {
			stop()
			<-served
			return err
		}
		s.announce()
		fmt.Fprintf(s.e.stderr, "toolc %s: no tools to serve: every client is told why until toolc is stopped (over stdio, until the client hangs up), and then it exits 1\n", s.cmd)
		<-served
		return err
	}
	if !t.opensGate {
		s.gate.Open(nil)
	}
	s.announce()
	followed := make(chan struct{})
	if t.follow != nil {
		go func() {
			defer close(followed)
			if err := t.follow(ctx); err != nil {
				fmt.Fprintf(s.e.stderr, "toolc %s: %v\n", s.cmd, err)
				stop()
			}
		}()
	} else {
		close(followed)
	}
	err = <-served
	stop()
	select {
	case <-followed:
	case <-time.After(followWait):
	}
	return err
}

// announce says where toolc serves, once its first load is over, and how
// many tools; nothing with --stdio, whose client knows.
func (s *server) announce() {
	if s.ln == nil {
		return
	}
	what := plural(len(s.rt.Snapshot().Tools()), "tool")
	if _, err := s.gate.State(); err != nil {
		what = "no tools: the load failed, and clients are told why"
	}
	fmt.Fprintf(s.e.stderr, "toolc %s: serving MCP on http://%s/mcp and the function-call API on http://%s/v1/ (%s)\n",
		s.cmd, s.ln.Addr(), s.ln.Addr(), what)
}

// followWait bounds how long toolc waits, once it has served, for follow
// to end (toolc dev's daemon stops its handlers as it ends).
const followWait = 15 * time.Second

// serve serves until ctx ends: MCP over stdio, or MCP and the
// function-call API over HTTP. Then it drains (rt.Shutdown): the transport
// stays up until the calls in flight are answered, and stopHandlers (if
// set) ends the calls that run past the grace period. stopSignals restores
// the signals' default action once ctx ends, so that a second SIGINT ends
// toolc at once.
func (s *server) serve(ctx context.Context, stopSignals func(), stopHandlers func(reason string)) error {
	defer context.AfterFunc(ctx, stopSignals)()
	e, cmd, sf := s.e, s.cmd, s.sf
	shutdown := runtime.ShutdownOptions{Grace: *sf.grace, StopHandlers: stopHandlers, Report: func(r runtime.ShutdownReport) {
		hint := ""
		if !r.GraceOver {
			hint = " (--grace)"
		}
		fmt.Fprintf(e.stderr, "toolc %s: %s%s\n", cmd, r, hint)
	}}
	if s.ln == nil {
		mcpserver.ServeStdio(ctx, s.rt, s.srv, e.stdin, e.stdout, shutdown)
		return nil
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
	handler := httpapi.NewHandler(s.rt, s.srv, httpapi.Options{
		Token: *sf.token, OAuth: sf.oauth, AllowedOrigins: origins, Logger: logger(e), Gate: s.gate, Collectors: s.collectors,
		MCP: mcpserver.HTTPOptions{Tasks: sf.tasks, Stateless: *sf.stateless, MaxSessions: *sf.maxSessions, SessionIdleTimeout: *sf.sessionIdle, SSEPollAfter: *sf.ssePoll,
			MaxStreams: maxStreams, MaxCallerStreams: *sf.callerStream, StreamWriteTimeout: *sf.writeTimeout},
	})
	limits := httpapi.ConnLimits{
		MaxConns: *sf.maxConns, ReadTimeout: *sf.readTimeout, WriteTimeout: *sf.writeTimeout,
		IdleTimeout: *sf.idleTimeout, CallTimeout: *sf.timeout, MaxBodyMemory: int64(*sf.maxBodyMem),
	}
	if err := httpapi.Serve(ctx, s.ln, s.rt, handler, httpapi.ServeOptions{Limits: limits, Shutdown: shutdown}); err != nil {
		return failf("%w", err)
	}
	return nil
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
	tokenFromEnv(fs, &sf)
	// The catalog is fixed for the life of the process: clients may keep
	// the tool list for an hour (see mcpserver.Options.ListTTL).
	return serveTools(e, "serve", &sf, serveListTTL, func(ctx context.Context, rt *runtime.Runtime, _ *mcpserver.Gate) (*tools, error) {
		src, err := loadServable(e, "serve", *bundleDir, *catalogFile, patterns)
		if err != nil {
			return nil, err
		}
		// The drain may come during the build, before there are handlers
		// to stop: running is set once they run.
		var mu sync.Mutex
		var running *handlers
		metrics := &upstream.Metrics{}
		return &tools{
			collectors: []prometheus.Collector{metrics},
			load: func(ctx context.Context) error {
				hs, err := startAll(ctx, e, src, rt, *sf.insecure)
				if err != nil {
					return err
				}
				mu.Lock()
				running = hs
				mu.Unlock()
				metrics.Use(hs.upstreams)
				return hs.serve(rt, src.cat)
			},
			serveFailure: true,
			stop: func(reason string) {
				mu.Lock()
				defer mu.Unlock()
				if running != nil {
					running.stop(reason)
				}
			},
			// The handlers are stopped by the drain, or here if serving
			// failed.
			close: func() {
				mu.Lock()
				defer mu.Unlock()
				if running != nil {
					running.stop("its handler was stopped")
				}
			},
		}, nil
	})
}

// servable is what serve and call serve: a catalog, and either its
// services' prebuilt handlers (a bundle) or the directory that its
// services' directories are relative to, where their handlers are built.
type servable struct {
	cat  *catalog.Catalog
	bins []*host.Binary // a bundle's; nil means build from base
	base string
}

// loadServable loads the bundle in dir, the catalog file, or the
// contracts of patterns. The catalog of a bundle is served as that bundle,
// with its prebuilt handlers: nothing is built.
func loadServable(e env, cmd, dir, file string, patterns []string) (*servable, error) {
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
		return &servable{cat: b.Catalog, bins: b.Binaries}, nil
	}
	cat, err := loadCatalog(e, cmd, file, patterns)
	if err != nil {
		return nil, err
	}
	base := "."
	if file != "" {
		base = filepath.Dir(file)
	}
	return &servable{cat: cat, base: base}, nil
}

// handlers are what serves a catalog's services: the handler plugins of
// some, the upstream MCP servers of the others.
type handlers struct {
	plugins   map[string]*host.Plugin
	upstreams *upstream.Set
}

// startAll starts the handler plugins (building them unless they are a
// bundle's) and the upstream servers of src's services.
func startAll(ctx context.Context, e env, src *servable, rt *runtime.Runtime, insecure bool) (*handlers, error) {
	hosted, ups := upstream.Split(src.cat)
	ps, err := startHandlers(ctx, e, &servable{cat: hosted, bins: src.bins, base: src.base})
	if err != nil {
		return nil, err
	}
	set, err := upstream.StartAll(ctx, ups, upstream.Options{
		Base: src.base, Stderr: e.stderr, Logger: logger(e), Insecure: insecure,
		// A message may be a result and its encoding: twice the
		// runtime's bound on a result, which it then enforces.
		MaxMessageBytes: 2 * rt.Options().MaxResultBytes,
	})
	if err != nil {
		host.Stop(ps, 0)
		return nil, failf("%w", err)
	}
	return &handlers{plugins: ps, upstreams: set}, nil
}

// serve swaps cat into rt, and keeps it current as upstream tools are
// withdrawn and restored.
func (h *handlers) serve(rt *runtime.Runtime, cat *catalog.Catalog) error {
	dispatchers := host.Dispatchers(h.plugins)
	maps.Copy(dispatchers, h.upstreams.Dispatchers())
	if err := h.upstreams.Serve(rt, cat, dispatchers); err != nil {
		return failf("%w", err)
	}
	return nil
}

// stop stops every handler at once, telling the calls still running why.
func (h *handlers) stop(reason string) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); h.upstreams.Stop(0, reason) }()
	host.StopBecause(h.plugins, 0, reason)
	wg.Wait()
}

// startHandlers starts every service's handler plugin, building them
// first unless they are a bundle's.
func startHandlers(ctx context.Context, e env, src *servable) (map[string]*host.Plugin, error) {
	bins := src.bins
	if bins == nil {
		cache, err := host.CacheDir()
		if err != nil {
			return nil, usageErr(err)
		}
		if bins, err = host.BuildAll(ctx, cache, src.base, src.cat); err != nil {
			return nil, failf("%w", err)
		}
	}
	ps, err := host.Start(ctx, bins, host.Options{Stderr: e.stderr, Logger: logger(e)})
	if err != nil {
		return nil, failf("%w", err)
	}
	return ps, nil
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
		if f, ok := e.stdin.(*os.File); ok && isTerminal(f) {
			argsJSON = []byte("{}")
		} else if data, err := inputfile.ReadAll(e.stdin, "standard input"); err != nil {
			return usageErr(err)
		} else if argsJSON = data; len(strings.TrimSpace(string(argsJSON))) == 0 {
			argsJSON = []byte("{}")
		}
	}
	tp, stopTracing, err := startTracing(e, "call")
	if err != nil {
		return err
	}
	defer stopTracing()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src, err := loadServable(e, "call", "", *catalogFile, patterns)
	if err != nil {
		return err
	}
	if src, err = withTool(src, tool); err != nil {
		return err
	}
	rt := runtime.New(runtime.Options{CallTimeout: *timeout, Logger: logger(e), TracerProvider: tp})
	running, err := startAll(ctx, e, src, rt, *insecure)
	if err != nil {
		return err
	}
	defer running.stop("toolc call ended")
	defer rpc.CleanupClients()
	if err := running.serve(rt, src.cat); err != nil {
		return err
	}
	res, err := rt.Call(ctx, tool, argsJSON)
	if err != nil {
		return usageErr(err)
	}
	out := httpapi.CallResponse{Content: mcpserver.ToContent(res.Content), StructuredContent: res.StructuredContent, IsError: res.IsError}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(out)
	if res.IsError {
		return exitWith(exitFail)
	}
	return nil
}

// withTool narrows what is served to the service of one tool, named by
// function name or MCP name, so that toolc call builds and starts one
// handler.
func withTool(src *servable, name string) (*servable, error) {
	for svc, t := range src.cat.Tools() {
		if t.Name == name || t.ExposedMCPName(svc.Name) == name {
			one := &servable{cat: &catalog.Catalog{Services: []*catalog.Service{svc}}, base: src.base}
			for _, b := range src.bins {
				if b.Service == svc.Name {
					one.bins = append(one.bins, b)
				}
			}
			return one, nil
		}
	}
	return nil, usagef("unknown tool %q; the catalog has %s", name, strings.Join(src.cat.ToolNames(), ", "))
}

func looksLikeJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "\"") || s == "null"
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
