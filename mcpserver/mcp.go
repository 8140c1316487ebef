// Package mcpserver serves a runtime's tools over MCP with go-sdk
// (github.com/modelcontextprotocol/go-sdk): New makes the mcp.Server whose
// tool list follows the runtime's swaps, ServeStdio serves it over
// standard input and output with the runtime's drain, and NewHTTPHandler
// over Streamable HTTP, every revision on one URL, with sessions and
// their cap, resumable streams, and the go-sdk half of OAuth. The Gate
// holds the requests that need the tools while a server's first load
// runs. Every workaround for a gap in go-sdk lives in this package, and
// says, after "Waits for go-sdk:", what would let it go.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
)

// Options configure the MCP server.
type Options struct {
	// Name and Version identify the server to clients. Default "toolc".
	Name, Version string
	// Instructions, if set, are sent to clients on initialization.
	Instructions string
	Logger       *slog.Logger
	// ListTTL is the freshness hint (ttlMs, MCP 2026-07-28 caching) of
	// tools/list and server/discover: how long a client may use the list
	// without asking again. The default, zero, says "stale at once", the
	// truth for a runtime that Swaps at any moment (toolc dev); toolc
	// serve of a fixed catalog sets an hour. Either way the list is the
	// same for every caller, so its cacheScope is "public", and
	// list_changed invalidates a cached list at once.
	ListTTL time.Duration
	// StateSecret is the key (at least 32 bytes) that seals the
	// requestState of a 2026-07-28 call whose handler asks the client
	// something (plugins.Elicit, Sample, Roots). Replicas behind one load
	// balancer must share it, so that each accepts the others' states.
	// Nil generates one, good for this process only.
	StateSecret []byte
	// StateTTL is how long a requestState is accepted. Default
	// DefaultStateTTL.
	StateTTL time.Duration
	// ContentDir is the directory that the catalog's service directories
	// are relative to, where the files that prompts and resources serve
	// are read from: the directory toolc ran in. Empty means the working
	// directory.
	ContentDir string
	// Tasks, if set, serves MCP's Tasks extension: the calls of tools with
	// task: "optional" or "required" from clients that declare it run
	// through it (see tasks.go). Serve the server over HTTP with the same
	// Manager in HTTPOptions.Tasks. Without it, an "optional" tool runs as
	// a plain call and a "required" one is refused.
	Tasks *tasks.Manager
	// Declared are the features, besides tools, that the server declares
	// at initialize and server/discover whether or not the catalog it has
	// loaded serves them yet. A session's capabilities are fixed when it
	// initializes, and a stdio client initializes at once, while the
	// handlers build: toolc serve, which compiles its contract before
	// serving, declares the contract's, so that a desktop client lists the
	// prompts and resources that the load brings; toolc dev declares all
	// of them, which an edit may add. A declared feature that the catalog
	// does not serve answers its lists empty, not "method not found".
	Declared Features
}

// Features are what an MCP server may serve besides tools.
type Features struct {
	Prompts, Resources, Completions bool
	// Skills declares MCP's Skills extension (SEP-2640), whose files
	// are resources.
	Skills bool
	// Tasks declares MCP's Tasks extension (SEP-2663) when the server
	// runs tasks (Options.Tasks): a tool with task: "optional" or
	// "required" makes one.
	Tasks bool
}

// FeaturesOf are the features that cat serves: completions complete the
// arguments of prompts and the variables of resource templates.
func FeaturesOf(cat *catalog.Catalog) Features {
	var f Features
	for _, s := range cat.Services {
		f.Prompts = f.Prompts || len(s.Prompts) > 0
		f.Resources = f.Resources || len(s.Resources) > 0 || len(s.Skills) > 0
		f.Skills = f.Skills || len(s.Skills) > 0
		for _, r := range s.Resources {
			f.Completions = f.Completions || r.IsTemplate()
		}
		for _, t := range s.Tools {
			f.Tasks = f.Tasks || t.Task != ""
		}
	}
	f.Completions = f.Completions || f.Prompts
	return f
}

// promptMethods and resourceMethods are the methods of the prompts and
// resources capabilities. go-sdk answers prompts/list and resources/list
// with empty lists even when their capabilities are not declared; toolc
// declares them only when the catalog has prompts or resources (go-sdk
// adds each capability once it serves one), and answers their methods
// "method not found" otherwise (404 for a 2026-07-28 request), so that
// server/discover and what is handled agree. Waits for go-sdk: "method not
// found" for the methods of a capability the server did not declare.
var (
	promptMethods   = map[string]bool{"prompts/list": true, "prompts/get": true}
	resourceMethods = map[string]bool{
		"resources/list":           true,
		"resources/templates/list": true,
		"resources/read":           true,
		"resources/subscribe":      true,
		"resources/unsubscribe":    true,
	}
)

func rejectUnserved(rt *runtime.Runtime, e *entries, declared Features, runsTasks bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			prompts, resources := e.has()
			complete := prompts || e.hasTemplates() || declared.Completions
			prompts, resources = prompts || declared.Prompts, resources || declared.Resources
			switch {
			case promptMethods[method] && !prompts || resourceMethods[method] && !resources:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found: this server serves no %s", method, strings.SplitN(method, "/", 2)[0])}
			case method == "completion/complete" && !complete:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found: this server serves no prompts or resource templates", method)}
			case method == "completion/complete":
				// Here rather than as go-sdk's CompletionHandler, which
				// would declare completions on a server with nothing to
				// complete.
				if c, ok := req.(*mcp.CompleteRequest); ok && c.Params != nil && c.Params.Ref != nil {
					return e.complete(ctx, c)
				}
			}
			res, err := rejectLongNames(next)(ctx, method, req)
			if err != nil {
				return res, err
			}
			// go-sdk declares prompts and resources once it serves some,
			// which is after the load; the rest waits for go-sdk: a
			// completions capability that follows what there is to
			// complete, and the Skills extension (with directoryRead)
			// when there are skills, and the Tasks extension when a tool
			// runs as a task (a client that sees it declared may send
			// task-augmented calls and tasks/* requests, which a server
			// of no task tool has no use for).
			skills := declared.Skills || e.hasSkills()
			if method != "initialize" && method != "server/discover" {
				return res, err
			}
			tasks := runsTasks && (declared.Tasks || hasTaskTool(rt.Snapshot()))
			declare := func(caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
				if caps == nil || (caps.Completions != nil || !complete) && (caps.Prompts != nil || !prompts) && (caps.Resources != nil || !resources) && (!skills || caps.Extensions[skillsExtension] != nil) && (!tasks || caps.Extensions[tasksExtension] != nil) {
					return nil
				}
				out := *caps
				if complete && out.Completions == nil {
					out.Completions = &mcp.CompletionCapabilities{}
				}
				if prompts && out.Prompts == nil {
					out.Prompts = &mcp.PromptCapabilities{ListChanged: true}
				}
				if resources && out.Resources == nil {
					out.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
				}
				if skills && out.Extensions[skillsExtension] == nil {
					out.Extensions = maps.Clone(out.Extensions)
					out.AddExtension(skillsExtension, map[string]any{"directoryRead": true})
				}
				if tasks && out.Extensions[tasksExtension] == nil {
					out.Extensions = maps.Clone(out.Extensions)
					out.AddExtension(tasksExtension, map[string]any{})
				}
				return &out
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				if caps := declare(r.Capabilities); caps != nil {
					out := *r
					out.Capabilities = caps
					return &out, nil
				}
			case *mcp.DiscoverResult:
				if caps := declare(r.Capabilities); caps != nil {
					out := *r
					out.Capabilities = caps
					return &out, nil
				}
			}
			return res, err
		}
	}
}

// hasTaskTool reports whether snap serves a tool that runs as a task.
func hasTaskTool(snap *runtime.Snapshot) bool {
	for _, t := range snap.Tools() {
		if t.Tool.Task != "" {
			return true
		}
	}
	return false
}

// explainWithheld answers a tools/call of a tool that the runtime
// withholds (an upstream tool that drifted from its contract) with the
// error that says why, where go-sdk would say only "unknown tool"; a
// caller whose token may not see the tool gets go-sdk's words.
func explainWithheld(rt *runtime.Runtime) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" && p != nil {
				snap := rt.Snapshot()
				if _, served := snap.Lookup(p.Name); !served {
					var we *runtime.WithheldError
					if err := snap.Unknown(callerOf(req), p.Name); errors.As(err, &we) {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

func rejectLongNames(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// go-sdk quotes an unknown tool's name whole; a name past the
		// bound is no tool's, and is answered here with a bounded quote.
		// Waits for go-sdk: a bounded quote of a name it does not know.
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && len(call.Params.Name) > runtime.MaxCallName {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%v %s", runtime.ErrUnknownTool, runtime.QuoteName(call.Params.Name))}
		}
		// A URI past the bound is no resource's, and is refused before a
		// template is matched against it (see maxURI).
		var uri string
		switch r := req.(type) {
		case *mcp.ReadResourceRequest:
			if r.Params != nil {
				uri = r.Params.URI
			}
		case *mcp.SubscribeRequest:
			if r.Params != nil {
				uri = r.Params.URI
			}
		}
		if err := checkURILength(uri); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	}
}

// Server is the MCP server of a runtime, as New makes it: go-sdk's
// mcp.Server, which serves every method, and what the direct path
// (direct.go) needs to answer the plain 2026-07-28 tools/call and
// tools/list over HTTP without go-sdk's machinery.
type Server struct {
	*mcp.Server
	tools *mcpTools
	ents  *entries
	impl  *mcp.Implementation // the serverInfo of every 2026-07-28 result
	gate  atomic.Pointer[Gate]
	// added is set once middleware is added after New: the direct path
	// would not run it, so from then on it stands aside.
	added atomic.Bool
}

// AddReceivingMiddleware adds middleware to go-sdk's server, as
// mcp.Server's does. The direct path does not run middleware, so a server
// with middleware added serves every request through go-sdk.
func (s *Server) AddReceivingMiddleware(middleware ...mcp.Middleware) {
	s.added.Store(true)
	s.Server.AddReceivingMiddleware(middleware...)
}

// Hold holds the requests that need the tools until g is open: go-sdk's
// through g.Hold, and the direct path's by leaving them to go-sdk until
// then (and after, when the load failed, for go-sdk to answer the error).
func (s *Server) Hold(g *Gate) {
	s.gate.Store(g)
	s.Server.AddReceivingMiddleware(g.Hold)
}

// New returns an MCP server for the runtime. Its tool list follows the
// runtime's snapshot: each swap adds, replaces and removes tools, and the
// server sends notifications/tools/list_changed. Serve it over stdio with
// ServeStdio, or over Streamable HTTP with NewHTTPHandler.
func New(rt *runtime.Runtime, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "toolc"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	ttl := int(opts.ListTTL.Milliseconds())
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = slog.New(newQuietUndelivered(logger.Handler()))
	ask := newAsker(opts, logger)
	ents := newEntries(rt, ask, opts.ContentDir)
	ents.ttl, ents.log, ents.declaredSkills = ttl, logger, opts.Declared.Skills
	// Exactly what toolc serves: tools, whose list changes on a Swap, the
	// log lines handlers send during a call, and tasks when it runs them;
	// go-sdk adds prompts and resources (with subscribe) once the catalog
	// has some, and rejectUnserved completions, which the contract's enums
	// answer, when there is a prompt or template to complete.
	caps := &mcp.ServerCapabilities{
		Tools:   &mcp.ToolCapabilities{ListChanged: true},
		Logging: &mcp.LoggingCapabilities{},
	}
	impl := &mcp.Implementation{Name: opts.Name, Version: opts.Version}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions:       opts.Instructions,
		Logger:             logger,
		Capabilities:       caps,
		SubscribeHandler:   ents.subscribe,
		UnsubscribeHandler: ents.unsubscribe,
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = ttl, "public"
			if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil && ents.handled(r.Params.URI) {
				// What a handler reads is of the moment (the issue that a
				// tool has just closed), and nothing tells the client
				// when it changes: a 2026-07-28 client that kept it for
				// the lists' hour would show the old one.
				c.TTLMs = 0
			}
			if callerOf(req) != nil {
				// Each OAuth caller has its own list (see scopeFilter), and
				// it follows the caller's token, which the client replaces
				// at any moment (a step-up adds scopes and so tools), while
				// clients key their cache by session, not token: a list
				// kept for an hour would hide the tools a step-up granted.
				c.TTLMs, c.CacheScope = 0, "private"
			}
		},
	})
	s := &mcpTools{rt: rt, srv: srv, tasks: opts.Tasks, served: map[string]string{}, ask: ask}
	// Tracing is outermost, so that a call refused by the others has its
	// span too. A list gets its tools' execution after the caller's
	// scopes filter it, and a hidden tool is refused before it could start
	// a task.
	srv.AddReceivingMiddleware(traceCalls(rt), rejectUnserved(rt, ents, opts.Declared, opts.Tasks != nil), s.listExecution, scopeFilter(rt), explainWithheld(rt), s.taskCalls, ents.filterLists, ents.keepSubscriptions, withCaller)
	ents.registerSkills(srv)
	srv.AddReceivingMiddleware(s.callDeferred)
	ents.srv = srv
	rt.OnSwap(func(snap *runtime.Snapshot) {
		s.sync(snap)
		ents.sync(snap)
	})
	return &Server{Server: srv, tools: s, ents: ents, impl: impl}
}

// mcpTools keeps the server's tool list in step with the snapshot.
type mcpTools struct {
	rt    *runtime.Runtime
	srv   *mcp.Server
	ask   *asker
	tasks *tasks.Manager // nil: no tasks

	mu     sync.Mutex
	served map[string]string // MCP name → tool fingerprint
	// gen counts the syncs that have finished: the direct path's cached
	// tools/list is good for one gen (see direct.go).
	gen atomic.Uint64
}

func (s *mcpTools) sync(snap *runtime.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Deferred tools are not registered, so that tools/list, which go-sdk
	// pages, holds the others alone; callDeferred calls them.
	tools := snap.Catalog.MCPTools()
	next := map[string]string{}
	for _, info := range snap.Tools() {
		if !info.Tool.Deferred {
			next[info.MCPName] = info.Tool.Fingerprint
		}
	}
	if snap.Catalog.HasDeferred() {
		// The runtime's search over the deferred tools, whose definition
		// is toolc's: the same in every snapshot.
		next[catalog.SearchToolName] = "toolc"
	}
	var gone []string
	for name := range s.served {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
	}
	for _, t := range tools {
		fp, ok := next[t.Name]
		if !ok || s.served[t.Name] == fp && fp != "" {
			continue // unchanged: no needless list_changed
		}
		s.srv.AddTool(toMCPTool(t), s.handler(t.Name))
	}
	s.served = next
	// Last, once go-sdk has the new list: a list cached while the sync
	// ran belongs to the gen before it.
	s.gen.Add(1)
}

func (s *mcpTools) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.callTool(ctx, name, req, s.events(ctx, req))
	}
}

// callTool serves a tools/call of the tool name: go-sdk's, through
// handler, and the direct path's (direct.go).
func (s *mcpTools) callTool(ctx context.Context, name string, req *mcp.CallToolRequest, onEvent func(runtime.Event)) (*mcp.CallToolResult, error) {
	args := req.Params.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if extra := req.Extra; extra != nil && extra.Header != nil {
		// The Mcp-Param-* headers are held to the arguments the
		// handler runs with, on the snapshot it runs on.
		strict := extra.Header.Get("MCP-Protocol-Version") >= modernRevision
		ctx = runtime.WithArgumentCheck(ctx, paramHeaderCheck(extra.Header, strict))
	}
	return s.call(ctx, name, req, args, onEvent)
}

// events sends a call's progress and log lines to its client.
func (s *mcpTools) events(ctx context.Context, req *mcp.CallToolRequest) func(runtime.Event) {
	token := req.Params.GetProgressToken()
	return func(ev runtime.Event) {
		switch {
		case ev.Progress != nil && token != nil:
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      ev.Progress.Progress,
				Total:         ev.Progress.Total,
				Message:       ev.Progress.Message,
			})
		case ev.Log != nil:
			req.Session.Log(ctx, &mcp.LoggingMessageParams{
				Level:  mcp.LoggingLevel(ev.Log.Level),
				Logger: ev.Log.Logger,
				Data:   ev.Log.Message,
			})
		}
	}
}

func toMCPTool(t catalog.MCPTool) *mcp.Tool {
	tool := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
	}
	if t.OutputSchema != nil {
		tool.OutputSchema = t.OutputSchema
	}
	if m := t.Meta; m != nil {
		tool.Meta = mcp.Meta{}
		if len(m.Groups) > 0 {
			tool.Meta[catalog.MCPGroupsKey] = m.Groups
		}
		if len(m.Scopes) > 0 {
			tool.Meta[catalog.MCPScopesKey] = m.Scopes
		}
		if m.DeferLoading {
			tool.Meta[catalog.MCPDeferLoadingKey] = true
		}
	}
	if a := t.Annotations; a != nil {
		tool.Annotations = &mcp.ToolAnnotations{
			DestructiveHint: a.DestructiveHint,
			OpenWorldHint:   a.OpenWorldHint,
			ReadOnlyHint:    a.ReadOnlyHint,
			IdempotentHint:  a.IdempotentHint,
			Title:           a.Title,
		}
	}
	return tool
}

// toResult converts a call's result to MCP's form.
func toResult(res *runtime.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{
		Content:           ToContent(res.Content),
		StructuredContent: res.StructuredContent,
		IsError:           res.IsError,
	}
	return out
}

// ToContent converts handler content to MCP content blocks.
func ToContent(content []plugins.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(content))
	for _, c := range content {
		switch c.Type {
		case "image":
			out = append(out, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
		case "audio":
			out = append(out, &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType})
		case "resource_link":
			out = append(out, &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size})
		case "resource":
			if r := c.Resource; r != nil {
				out = append(out, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob}})
			}
		default:
			out = append(out, &mcp.TextContent{Text: c.Text})
		}
	}
	return out
}

// callDeferred answers a tools/call of a deferred tool, which the server
// does not register (a client finds it with the search tool,
// catalog.SearchToolName), as a registered tool's call is answered.
func (s *mcpTools) callDeferred(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && call.Params != nil {
			if t, ok := s.rt.Snapshot().ByMCPName(call.Params.Name); ok && t.Tool.Deferred {
				return s.handler(call.Params.Name)(ctx, call)
			}
		}
		return next(ctx, method, req)
	}
}
