// Package upstream serves a service's tools from an existing MCP server,
// held to the service's contract: the handler kind beside host's plugins
// for a contract with an upstream block.
//
//	srv, err := upstream.Start(ctx, svc, upstream.Options{Base: ".", OnChange: reswap})
//	upstream.Swap(rt, cat, map[string]*upstream.Server{svc.Name: srv}, map[string]runtime.Dispatcher{svc.Name: srv})
//
// A Server is a runtime.Dispatcher. The runtime validates a call's
// arguments against the contract (defaults applied, unknown fields
// refused) before the Server forwards them, and holds the result to the
// contract's response fields after; the Server adds what only it can
// know: the server's process or connection, and whether each tool still
// matches its contract.
//
// A command runs in a process group of its own, with only the environment
// that inheritance allows and its contract names; it is restarted with
// backoff when it dies or stops answering pings, and stopped after the
// calls in flight at shutdown. A url is reached with a pooled client that
// follows no redirect to another host, and refuses plain http beyond
// loopback unless Options.Insecure.
//
// Pinning fails closed: at start, on every notifications/tools/list_changed
// and every check interval, the live tools are compared with the contract
// (Compare). A tool that differs in anything a model reads is withdrawn:
// Filter leaves it out of the catalog the runtime serves, calls to it are
// refused, and a log line and the Drift counts name it and the difference.
// It is restored when it matches again.
//
// A server that asks its client something in the middle of a call
// (elicitation, sampling, roots), at either revision, asks the call's
// caller: the round ends with the questions as its InputRequests, as a Go
// handler's do, and the call waits, parked in this process, for the round
// that brings the answers (see ask.go).
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/buildinfo"
	"github.com/toolc/toolc/internal/cutshort"
	"github.com/toolc/toolc/internal/supervise"
	"github.com/toolc/toolc/lock"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// Defaults of the contract's timeouts and of the supervision.
const (
	DefaultStartTimeout   = 30 * time.Second
	DefaultCheckInterval  = 5 * time.Minute
	DefaultHealthInterval = 10 * time.Second
	DefaultHealthTimeout  = 5 * time.Second
	// MaxTools bounds the tools a server may list: a server that lists
	// more is not read further, and every tool of its service is withdrawn.
	MaxTools = 10000
	// maxPages bounds the pages of one tools/list.
	maxPages = 1000
)

// Options configure how upstream servers are started and held.
type Options struct {
	// Base is the directory that the services' Dir is relative to.
	Base string
	// Stderr receives a command's standard error, each line prefixed with
	// its service's name. Default os.Stderr.
	Stderr io.Writer
	// Logger receives start, restart, withdrawal and restoration lines.
	Logger *slog.Logger
	// Insecure allows a url that is plain http to a host that is not
	// loopback (toolc serve --insecure).
	Insecure bool
	// CallTimeout bounds a call whose contract sets no callTimeout; zero
	// leaves it to the runtime's.
	CallTimeout time.Duration
	// MaxMessageBytes bounds one message from a server, a result
	// included: a larger one ends the session (which is restarted), so
	// that a server cannot make toolc read without bound. Default 16 MiB.
	MaxMessageBytes int
	// OnChange is called, from a goroutine of the Server's, when a tool
	// is withdrawn or restored: the caller swaps in Filter's catalog.
	OnChange func(service string)
	// HealthInterval and HealthTimeout configure the ping that restarts a
	// server that stopped answering; a negative HealthInterval turns it
	// off.
	HealthInterval, HealthTimeout time.Duration
	// Environ is toolc's environment, which env values are read from and
	// the inherited variables come from. Default os.Environ.
	Environ func() []string
	// AnswerTimeout is how long a call whose server asked its client a
	// question waits for the answer between rounds; default
	// DefaultAnswerTimeout.
	AnswerTimeout time.Duration
}

// For returns o for servers whose calls rt makes: unless o sets
// MaxMessageBytes, twice rt's bound on a result, since a message may be a
// result and its encoding, and rt then enforces its own bound.
func (o Options) For(rt *runtime.Runtime) Options {
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = 2 * rt.Options().MaxResultBytes
	}
	return o
}

func (o Options) withDefaults() Options {
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 16 << 20
	}
	if o.HealthInterval == 0 {
		o.HealthInterval = DefaultHealthInterval
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	return o
}

// Server supervises the upstream server of one service and dispatches
// its calls.
type Server struct {
	svc    *catalog.Service
	opts   Options
	spec   spec
	client *mcp.Client
	tools  []string // contract keys, sorted
	byKey  map[string]*catalog.Tool

	// sup restarts the server's session when it ends, with backoff, and
	// stops it after the calls in flight.
	sup *supervise.Supervisor[*session]

	// withdrawn maps a contract key to the changes that withdrew it.
	withdrawn atomic.Pointer[map[string][]lock.Change]
	// checkMu serialises pin checks.
	checkMu sync.Mutex
	// drift counts withdrawals by tool and rule, for metrics.
	driftMu sync.Mutex
	drift   map[[2]string]int64

	// tap, set by List, keeps the schemas as the server wrote them.
	tap *schemaTap

	progress sync.Map // progress token -> *call
	tokens   atomic.Uint64

	// calls are the calls in flight, which a server's request over its
	// session is related to (see ask.go).
	callsMu sync.Mutex
	calls   map[*call]struct{}
	// parked are the calls waiting for their caller's answers, by the id
	// of each question they wait on.
	parkMu sync.Mutex
	parked map[string]*parked
	check  chan struct{}
}

var _ runtime.Dispatcher = (*Server)(nil)

// Start starts the upstream server of svc (which must have an Upstream),
// connects to it, and compares its tools with the contract. The first
// start must succeed: a command that is missing or does not speak MCP is
// an error here, not a restart loop.
func Start(ctx context.Context, svc *catalog.Service, opts Options) (*Server, error) {
	s, err := newServer(ctx, svc, opts, nil)
	if err != nil {
		// A start that ctx's end abandoned wraps ctx.Err(), whatever
		// go-sdk made of it, so that serve.Run can tell it from a failure.
		return nil, cutshort.Mark(ctx, err)
	}
	if err := s.Check(ctx); err != nil {
		s.Close(0)
		return nil, cutshort.Mark(ctx, fmt.Errorf("listing the tools of the upstream of service %q: %w", svc.Name, err))
	}
	go s.watch()
	return s, nil
}

// Listing is what a server says about itself and its tools.
type Listing struct {
	// Server is the server's name and version, as initialize gave them.
	Server *mcp.Implementation
	// Instructions are the server's instructions, if any.
	Instructions string
	Tools        []*mcp.Tool
}

// List starts the upstream server of svc (whose tools are not read),
// lists its tools, within MaxTools, and stops it: what toolc import
// reads.
func List(ctx context.Context, svc *catalog.Service, opts Options) (*Listing, error) {
	opts = opts.withDefaults()
	tap := newSchemaTap(opts.MaxMessageBytes)
	s, err := newServer(ctx, svc, opts, tap)
	if err != nil {
		return nil, err
	}
	defer s.Close(time.Second)
	sess := s.sup.Current()
	tools, err := listTools(ctx, sess.cs)
	if err != nil {
		return nil, err
	}
	// The schemas as the server wrote them, in their order.
	for i, t := range tools {
		if t == nil {
			continue
		}
		if raw, ok := tap.schemas(t.Name); ok {
			cp := *t
			if len(raw.in) > 0 {
				cp.InputSchema = raw.in
			}
			if len(raw.out) > 0 && string(raw.out) != "null" {
				cp.OutputSchema = raw.out
			}
			tools[i] = &cp
		}
	}
	out := &Listing{Tools: tools}
	if ir := sess.cs.InitializeResult(); ir != nil {
		out.Server, out.Instructions = ir.ServerInfo, ir.Instructions
	}
	return out, nil
}

// newServer starts the server of svc and connects to it.
func newServer(ctx context.Context, svc *catalog.Service, opts Options, tap *schemaTap) (*Server, error) {
	if svc.Upstream == nil {
		return nil, fmt.Errorf("service %q has no upstream", svc.Name)
	}
	opts = opts.withDefaults()
	sp, err := newSpec(svc, opts)
	if err != nil {
		return nil, fmt.Errorf("the upstream of service %q: %w", svc.Name, err)
	}
	if tap != nil && sp.httpClient != nil {
		sp.httpClient.Transport.(*headerTransport).tap = tap
	}
	s := &Server{svc: svc, opts: opts, spec: sp, tap: tap, byKey: map[string]*catalog.Tool{},
		drift: map[[2]string]int64{}, check: make(chan struct{}, 1),
		calls: map[*call]struct{}{}, parked: map[string]*parked{}}
	for _, t := range svc.Tools {
		s.tools = append(s.tools, t.Name)
		s.byKey[t.Name] = t
	}
	sort.Strings(s.tools)
	none := map[string][]lock.Change{}
	s.withdrawn.Store(&none)
	s.client = mcp.NewClient(&mcp.Implementation{Name: "toolc", Version: buildinfo.Version()}, &mcp.ClientOptions{
		// toolc offers what its callers may answer, and passes each
		// question to the caller of the call it is for (ask.go); a caller
		// that cannot answer it makes the question an error. It answers
		// a 2026-07-28 InputRequiredResult itself, in the call, rather
		// than with go-sdk's handlers, which know no call.
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
		},
		MultiRoundTrip:              &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { s.checkSoon() },
		ProgressNotificationHandler: s.onProgress,
		LoggingMessageHandler:       s.onLog,
	})
	s.client.AddReceivingMiddleware(s.askMiddleware)
	sess, err := s.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the upstream of service %q: %w", svc.Name, err)
	}
	s.sup = supervise.New(sess, supervise.Config[*session]{
		Start: s.start,
		Kill:  func(sess *session) { sess.close(0) },
		Lost: func(sess *session) {
			opts.Logger.Warn("upstream server went away", "service", svc.Name, "status", sess.exitStatus())
		},
		Restarted: func(sess *session, err error) {
			if err != nil {
				opts.Logger.Warn("upstream restart failed", "service", svc.Name, "error", err)
				return
			}
			opts.Logger.Info("upstream restarted", "service", svc.Name, "pid", sess.proc.pid())
			s.checkSoon() // the new process may serve other tools
		},
		Stopped: fmt.Errorf("the upstream server of service %q has been stopped", svc.Name),
		Waiting: func(err error) error {
			return fmt.Errorf("the upstream server of service %q is restarting: %w", svc.Name, err)
		},
	})
	return s, nil
}

// Service returns the service the server serves.
func (s *Server) Service() *catalog.Service { return s.svc }

// Tools lists every tool the contract declares: withdrawn ones too, as
// the runtime asks a dispatcher for the tools of its service, and Filter
// decides what is served.
func (s *Server) Tools() []string { return s.tools }

// Withdrawn returns the withdrawn tools, by contract key, with the
// changes that withdrew each.
func (s *Server) Withdrawn() map[string][]lock.Change { return *s.withdrawn.Load() }

// ProtocolVersion returns the MCP revision the server speaks now, or ""
// while it is down.
func (s *Server) ProtocolVersion() string {
	sess := s.sup.Current()
	if sess == nil {
		return ""
	}
	if ir := sess.cs.InitializeResult(); ir != nil {
		return ir.ProtocolVersion
	}
	return ""
}

// Pid returns the process ID of a command's server, or 0.
func (s *Server) Pid() int {
	sess := s.sup.Current()
	if sess == nil || sess.proc == nil {
		return 0
	}
	return sess.proc.pid()
}

// Call forwards a call whose arguments the runtime has validated.
func (s *Server) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(plugins.Event)) (*plugins.Result, error) {
	t := s.byKey[tool]
	if t == nil {
		return nil, fmt.Errorf("service %q has no tool %q", s.svc.Name, tool)
	}
	if changes, ok := s.Withdrawn()[tool]; ok {
		return plugins.Errorf("%s is withdrawn: %s", tool, withdrawnWhy(s.svc.Name, changes)), nil
	}
	parent := ctx
	if s.spec.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.spec.callTimeout)
		defer cancel()
	}
	// ownTimeout tells the contract's callTimeout from the runtime's own
	// and the caller's, so that the message names the bound that ended
	// the call.
	ownTimeout := func() bool {
		return errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil
	}
	in := plugins.InputOf(ctx)
	// A round that brings the answers to an upstream's questions resumes
	// the call that asked them.
	c, res := s.resume(tool, in)
	if res != nil {
		return res, nil
	}
	if c == nil {
		sess, err := s.sup.Acquire(ctx)
		if err != nil {
			if ownTimeout() {
				return plugins.Errorf("%s was not run: the upstream server of service %q did not come back within %s, its callTimeout", tool, s.svc.Name, s.spec.callTimeout), nil
			}
			return nil, err
		}
		c = s.begin(ctx, sess, tool, t, args, onEvent != nil)
	}
	c.input.Store(in)
	if onEvent != nil {
		c.onEvent.Store(&onEvent)
	} else {
		c.onEvent.Store(nil)
	}
	out, asked := s.await(ctx, c)
	if asked != nil {
		return asked, nil
	}
	res2, err := out.res, out.err
	if err != nil {
		var missing *plugins.MissingCapabilityError
		if errors.As(err, &missing) {
			return &plugins.Result{MissingCapability: missing.Capability, IsError: true,
				Content: []plugins.Content{plugins.TextContent(fmt.Sprintf("the upstream server of service %q asked the client a question: %v", s.svc.Name, missing))}}, nil
		}
		var failed *askError
		if errors.As(err, &failed) && ctx.Err() == nil {
			// The call's questions could not be asked or went
			// unanswered; the session is fine.
			return plugins.Errorf("%s: %v", tool, truncate(err.Error(), 2000)), nil
		}
		if why := c.sess.why.Load(); why != nil {
			return nil, errors.New(*why)
		}
		if ownTimeout() {
			return plugins.Errorf("%s did not finish within %s, the callTimeout of its upstream server, and was cancelled", tool, s.spec.callTimeout), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && !c.sess.ended() {
			// A JSON-RPC error from the server: the model reads it, as
			// it reads a tool error.
			return plugins.Errorf("the upstream server of service %q refused the call: %s", s.svc.Name, truncate(err.Error(), 2000)), nil
		}
		// Anything else is the connection failing (the process exited,
		// wrote what is not JSON-RPC, or sent a message over the limit):
		// the session is done for, and a new one is started.
		return nil, s.endedDuringCall(c.sess, err)
	}
	s.sup.Answered() // a server that answers starts a fresh backoff
	return convertResult(res2)
}

// begin starts the upstream call of tool on sess, which Acquire counted
// in flight: the call's own goroutine runs it (drive), outside the round's
// context, so that it may wait for its caller's answers across rounds.
func (s *Server) begin(ctx context.Context, sess *session, tool string, t *catalog.Tool, args json.RawMessage, progress bool) *call {
	c := &call{id: newQuestionID(), tool: tool, sess: sess, cs: sess.cs, asks: make(chan *ask), done: make(chan outcome, 1), ended: make(chan struct{})}
	dctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), callKey{}, c))
	c.cancel = cancel
	params := &mcp.CallToolParams{Name: UpstreamName(t), Arguments: args}
	meta := mcp.Meta{}
	token := ""
	if progress {
		// Only a caller that takes events gets the server's progress,
		// as before questions: a call without them carries no token.
		token = "toolc-" + strconv.FormatUint(s.tokens.Add(1), 10)
		s.progress.Store(token, c)
		meta["progressToken"] = token
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	for k, v := range carrier {
		meta[k] = v
	}
	if len(meta) > 0 {
		params.Meta = meta
	}
	s.register(c)
	go func() {
		if token != "" {
			defer s.progress.Delete(token)
		}
		s.drive(dctx, c, params)
	}()
	return c
}

// endedDuringCall says that the session ended under a call, and what
// happens next.
func (s *Server) endedDuringCall(sess *session, cause error) error {
	sess.close(0)
	restarting := s.sup.Lost(sess)
	how := ""
	if st := sess.exitStatus(); st != "" {
		how = " (" + st + ")"
	} else if cause != nil {
		how = " (" + truncate(cause.Error(), 300) + ")"
	}
	if !restarting {
		return fmt.Errorf("the upstream server of service %q went away during the call%s; it is not restarted, as it is being stopped", s.svc.Name, how)
	}
	return fmt.Errorf("the upstream server of service %q went away during the call%s; it is being restarted, so the call can be retried", s.svc.Name, how)
}

// start connects to the server again, for a restart.
func (s *Server) start() (*session, error) {
	sess, err := s.connect(context.Background())
	if err != nil {
		return nil, fmt.Errorf("restarting the upstream server of service %q: %w", s.svc.Name, err)
	}
	return sess, nil
}

// checkSoon asks the watcher for a pin check.
func (s *Server) checkSoon() {
	select {
	case s.check <- struct{}{}:
	default:
	}
}

// watch runs the health check and the pin checks until Close.
func (s *Server) watch() {
	health := time.NewTicker(max(s.opts.HealthInterval, time.Millisecond))
	if s.opts.HealthInterval < 0 {
		health.Stop()
	}
	defer health.Stop()
	pin := time.NewTicker(s.spec.checkInterval)
	defer pin.Stop()
	for {
		select {
		case <-s.sup.Done():
			return
		case <-health.C:
			s.ping()
		case <-pin.C:
			s.runCheck()
		case <-s.check:
			s.runCheck()
		}
	}
}

func (s *Server) runCheck() {
	ctx, cancel := context.WithTimeout(context.Background(), s.spec.startTimeout)
	defer cancel()
	if err := s.Check(ctx); err != nil {
		s.opts.Logger.Warn("upstream tool check failed", "service", s.svc.Name, "error", err)
	}
}

// ping checks that the server answers, and restarts one that does not.
func (s *Server) ping() {
	sess := s.sup.Current()
	if sess == nil {
		return
	}
	if sess.ended() {
		s.sup.Lost(sess)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.HealthTimeout)
	err := sess.cs.Ping(ctx, nil)
	cancel()
	if err == nil || sess.ended() {
		return
	}
	why := fmt.Sprintf("the upstream server of service %q stopped answering: it did not answer a ping within %s, so it was stopped and is being restarted; the call can be retried", s.svc.Name, s.opts.HealthTimeout)
	sess.why.CompareAndSwap(nil, &why)
	s.opts.Logger.Warn("upstream server failed its ping; restarting it", "service", s.svc.Name, "error", err)
	sess.close(0)
	s.sup.Lost(sess)
}

// Check compares the server's live tools with the contract now, and
// withdraws or restores tools accordingly. A server that cannot be
// listed (it is restarting) leaves the tools as they were; one that
// lists more than MaxTools has every tool withdrawn.
func (s *Server) Check(ctx context.Context) error {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	sess := s.sup.Current()
	if sess == nil || sess.ended() {
		return fmt.Errorf("the server is not running")
	}
	live, err := listTools(ctx, sess.cs)
	var changes []lock.Change
	var tooMany *tooManyError
	switch {
	case errors.As(err, &tooMany):
		for _, t := range s.svc.Tools {
			changes = append(changes, change(s.svc, t, "tool-list-refused", true, "%v", err))
		}
	case err != nil:
		return err
	default:
		changes = Compare(s.svc, live)
	}
	s.apply(byTool(s.svc, changes), changes)
	return nil
}

// apply stores a new set of withdrawn tools, logs and counts what
// changed, and tells OnChange.
func (s *Server) apply(now map[string][]lock.Change, all []lock.Change) {
	before := s.Withdrawn()
	changed := false
	for _, tool := range s.tools {
		was, is := before[tool], now[tool]
		switch {
		case is != nil && (was == nil || describe(was) != describe(is)):
			changed = changed || was == nil
			s.opts.Logger.Warn("upstream tool withdrawn: its live definition differs from the contract",
				"service", s.svc.Name, "tool", tool, "difference", describe(is))
			s.driftMu.Lock()
			for _, c := range is {
				s.drift[[2]string{tool, c.Rule}]++
			}
			s.driftMu.Unlock()
		case is == nil && was != nil:
			changed = true
			s.opts.Logger.Info("upstream tool restored: it matches the contract again", "service", s.svc.Name, "tool", tool)
		}
	}
	for _, c := range all {
		if c.Rule == "tool-added" && s.byKey[c.Tool] == nil {
			s.opts.Logger.Debug("upstream tool not declared; not served", "service", s.svc.Name, "tool", truncate(c.Tool, 128))
		}
	}
	s.withdrawn.Store(&now)
	if changed && s.opts.OnChange != nil {
		s.opts.OnChange(s.svc.Name)
	}
}

// DriftCount is how many times a tool was found to differ from its
// contract, by the rule of the difference.
type DriftCount struct {
	Service, Tool, Rule string
	Count               int64
}

// Drift returns the counts of differences found, sorted.
func (s *Server) Drift() []DriftCount {
	s.driftMu.Lock()
	defer s.driftMu.Unlock()
	out := make([]DriftCount, 0, len(s.drift))
	for k, n := range s.drift {
		out = append(out, DriftCount{Service: s.svc.Name, Tool: k[0], Rule: k[1], Count: n})
	}
	slices.SortFunc(out, func(a, b DriftCount) int {
		if a.Tool != b.Tool {
			return cmpString(a.Tool, b.Tool)
		}
		return cmpString(a.Rule, b.Rule)
	})
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type tooManyError struct{ n int }

func (e *tooManyError) Error() string {
	return fmt.Sprintf("the server lists more than %d tools (or more than %d pages of them); toolc reads no further, and serves none of its tools", MaxTools, maxPages)
}

// listTools pages through tools/list, within MaxTools and maxPages.
func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page >= maxPages {
			return nil, &tooManyError{len(out)}
		}
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if len(out) > MaxTools {
			return nil, &tooManyError{len(out)}
		}
		if res.NextCursor == "" {
			return out, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// onProgress passes a server's progress to the call that asked for it.
func (s *Server) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, _ := req.Params.ProgressToken.(string)
	c, ok := s.progress.Load(tok)
	if !ok {
		return
	}
	if f := c.(*call).onEvent.Load(); f != nil {
		(*f)(plugins.Event{Progress: &plugins.ProgressEvent{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message}})
	}
}

// onLog writes a server's log notifications to toolc's log: MCP ties
// them to no call.
func (s *Server) onLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	data, _ := json.Marshal(req.Params.Data)
	s.opts.Logger.Info("upstream log", "service", s.svc.Name, "level", string(req.Params.Level), "logger", req.Params.Logger, "data", truncate(string(data), 4096))
}

// Close stops the server after the calls in flight finish, or after
// grace, whichever comes first. It may be called more than once.
func (s *Server) Close(grace time.Duration) {
	s.Stop(grace, "its upstream server was stopped")
}

// Stop is Close, with the reason a call still running after grace is
// given.
func (s *Server) Stop(grace time.Duration, reason string) {
	sess, overdue := s.sup.Stop(grace)
	if sess == nil {
		return
	}
	if overdue {
		why := fmt.Sprintf("the upstream server of service %q was stopped before the call finished: %s", s.svc.Name, reason)
		sess.why.CompareAndSwap(nil, &why)
	}
	sess.close(2 * time.Second)
}

// Filter returns cat without the tools that the servers have withdrawn.
// It returns cat itself when none is.
func Filter(cat *catalog.Catalog, servers map[string]*Server) *catalog.Catalog {
	var keep []string
	dropped := false
	for svc, t := range cat.Tools() {
		if srv := servers[svc.Name]; srv != nil {
			if _, out := srv.Withdrawn()[t.Name]; out {
				dropped = true
				continue
			}
		}
		keep = append(keep, t.Name)
	}
	if !dropped {
		return cat
	}
	sub, err := cat.Select(keep...)
	if err != nil {
		return cat // cannot happen: every name is the catalog's
	}
	sub.Seal()
	return sub
}

// Withheld returns the tools of cat that the servers have withdrawn, each
// with why, for runtime.SwapWithheld: a call to one is told that the
// upstream changed, and how to see the difference.
func Withheld(cat *catalog.Catalog, servers map[string]*Server) []runtime.Withheld {
	var out []runtime.Withheld
	for svc, t := range cat.Tools() {
		srv := servers[svc.Name]
		if srv == nil {
			continue
		}
		if changes, ok := srv.Withdrawn()[t.Name]; ok {
			out = append(out, runtime.Withheld{Service: svc, Tool: t, Why: withdrawnWhy(svc.Name, changes)})
		}
	}
	return out
}

// withdrawnWhy says why a withdrawn tool is refused: the tool's
// definition on the upstream differs from the contract, how, and what to
// run to see it whole.
func withdrawnWhy(service string, changes []lock.Change) string {
	return fmt.Sprintf("the upstream server of service %q changed this tool, so it is not served until the contract is updated or the server reverts (%s); run toolc diff --upstream to see the difference",
		service, truncate(describe(changes), 1000))
}

// Swap swaps cat into rt with the dispatchers (which must include the
// servers'), without the tools the servers have withdrawn, whose calls
// are refused saying why.
func Swap(rt *runtime.Runtime, cat *catalog.Catalog, servers map[string]*Server, dispatchers map[string]runtime.Dispatcher) (*runtime.Snapshot, error) {
	return rt.SwapWithheld(Filter(cat, servers), dispatchers, Withheld(cat, servers))
}

// Filter is the package's Filter for this server alone.
func (s *Server) Filter(cat *catalog.Catalog) *catalog.Catalog {
	return Filter(cat, map[string]*Server{s.svc.Name: s})
}
