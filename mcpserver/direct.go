package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/jsondepth"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// The direct path. go-sdk v1.8.0 serves each 2026-07-28 request over HTTP
// by making a session for it: a server session with its jsonrpc2
// connection, goroutines and channels, and the generic method dispatch.
// For a call of a fast tool that costs several times the call itself
// (BENCHMARKS.md, issue 27). tools/call and tools/list, which carry
// nearly all of a server's traffic, are answered here instead when the
// request is one whose answer this file makes exactly as go-sdk would,
// byte for byte: the same tool handler (mcpTools.callTool), the result
// amended as go-sdk amends it (resultType, _meta's serverInfo, an empty
// content list), encoded with go-sdk's own encoder, and framed as its
// stateless handler frames it.
//
// Which requests: accept decides, before anything runs, with a check that
// errs on go-sdk's side: a POST of one tools/call or tools/list request,
// with the headers every 2026-07-28 client sends and nothing that makes
// go-sdk answer otherwise (no progress token or log level, no
// requestState or input responses, no capabilities beyond those of
// plainCapabilities, no task tool, no deferred tool, no x-mcp-header
// arguments, no cursor, no middleware added to the server after New, a
// gate that is open). With OAuth, a call of a tool the caller's token
// holds every scope of, with scopeFilter's audit line: a tools/list is
// go-sdk's then, since each caller's list is its own, and so is a call
// that scopeFilter refuses. Everything else is go-sdk's, as before:
// sessions, errors of the request itself, every other method.
// TestDirectPathIsGoSDK and FuzzDirectPath hold the two to the same
// bytes. Waits for go-sdk: a stateless request served without a session.

// directPath answers the requests accept takes.
type directPath struct {
	srv *Server
	rt  *runtime.Runtime
	// stateless is go-sdk's handler, which makes the tools/list result
	// that the path keeps for a generation of the tool list.
	stateless http.Handler
	list      atomic.Pointer[cachedList]
	// answered counts the requests the path answered, for the tests that
	// hold it to go-sdk and check that it answers what it should.
	answered atomic.Uint64
	// oauth: the server verifies OAuth callers (HTTPOptions.OAuth), and
	// the path takes their calls.
	oauth bool
}

// cachedList is go-sdk's tools/list result for a 2026-07-28 request
// without a cursor, for one generation of the server's tools
// (mcpTools.gen): the same for every caller when there is no OAuth.
type cachedList struct {
	gen    uint64
	result json.RawMessage
}

// directRequest is what accept read of a request.
type directRequest struct {
	req      *jsonrpc.Request
	params   *mcp.CallToolParamsRaw // tools/call only
	declared declared               // 2026-07-28 only
	// caller and token are the OAuth caller, as oauth.Middleware verified
	// it, and the TokenInfo that go-sdk hands its handlers: both nil
	// without OAuth.
	caller *oauth.Caller
	token  *sdkauth.TokenInfo
}

// serve answers r on the direct path, or reports false, having written
// nothing, for go-sdk to answer it.
func (d *directPath) serve(w http.ResponseWriter, r *http.Request) bool {
	q, ok := d.accept(r)
	if !ok {
		return false
	}
	if q.req.Method == "tools/list" {
		result, ok := d.toolList(r)
		if !ok {
			return false
		}
		d.answered.Add(1)
		writeSSE(w, &jsonrpc.Response{ID: q.req.ID, Result: result})
		return true
	}
	d.answered.Add(1)
	req := &mcp.CallToolRequest{Params: q.params, Extra: &mcp.RequestExtra{Header: r.Header, TokenInfo: q.token}}
	// No progress token and no log level: go-sdk sends neither progress
	// nor log lines for this request, and nor does the path. The caller
	// is on r's context already, where runtime.Call reads it.
	ctx := withDeclared(r.Context(), q.declared)
	res, err := tracedCall(ctx, d.rt, req, func(ctx context.Context) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, err := d.srv.tools.callTool(ctx, q.params.Name, req, func(runtime.Event) {})
		// As scopeFilter writes it, inside the span: after the call,
		// before the answer.
		d.rt.Audit(q.caller, q.params.Name, callOutcome(res, err), time.Since(start), q.params.Arguments)
		return res, err
	})
	d.answerCall(w, q.req.ID, res, err)
	return true
}

// Results whose resultType is set, which go-sdk keeps in an unexported
// field: a CallToolResult read from JSON is the one way to get one. Each
// answer copies one and sets the exported fields.
var (
	completeResult      = resultOfType("complete")
	inputRequiredResult = resultOfType("input_required")
)

func resultOfType(t string) mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"resultType":"`+t+`"}`), &r); err != nil {
		panic(err) // go-sdk's own type and a constant: a test fails first
	}
	return r
}

// answerCall answers a tools/call with what the handler returned, as
// go-sdk's server and stateless handler do.
func (d *directPath) answerCall(w http.ResponseWriter, id jsonrpc.ID, res *mcp.CallToolResult, err error) {
	if err != nil {
		writeAnswer(w, &jsonrpc.Response{ID: id, Error: err})
		return
	}
	out, err := sdkCallResult(res, d.srv.impl)
	if err != nil {
		writeAnswer(w, &jsonrpc.Response{ID: id, Error: err})
		return
	}
	data, merr := out.MarshalJSON()
	if merr != nil {
		writeAnswer(w, &jsonrpc.Response{ID: id, Error: merr})
		return
	}
	writeSSE(w, &jsonrpc.Response{ID: id, Result: data})
}

// sdkCallResult is the result go-sdk's server sends for what a tool
// handler returned without an error (res): for a request of 2026-07-28,
// whose serverInfo is info, with the resultType of multi round-trip
// requests (SEP-2322) and the server named in _meta (SEP-2575); for a
// request of a session of an earlier revision (info nil), as it is. Either
// way an empty content list, not null. The error is go-sdk's for a result
// that is both content and questions.
//
// The result's own MarshalJSON is the encoding go-sdk sends: its writer's
// encoder, which does not escape, compacts what MarshalJSON returns, and
// compact JSON stays as it is; so the paths call it, and spare the copy
// and the scan of an encoder around it.
func sdkCallResult(res *mcp.CallToolResult, info *mcp.Implementation) (*mcp.CallToolResult, error) {
	if res.InputRequests != nil && (len(res.Content) > 0 || res.StructuredContent != nil) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	if info == nil {
		out := *res
		if out.Content == nil {
			out.Content = []mcp.Content{} // go-sdk avoids "null"
		}
		return &out, nil
	}
	out := completeResult
	if res.InputRequests != nil {
		out = inputRequiredResult
	}
	out.Content, out.StructuredContent, out.IsError = res.Content, res.StructuredContent, res.IsError
	out.InputRequests, out.RequestState = res.InputRequests, res.RequestState
	if out.Content == nil && res.InputRequests == nil {
		out.Content = []mcp.Content{} // go-sdk avoids "null"
	}
	// SEP-2575: the server names itself in each result's _meta.
	meta := res.Meta
	if meta == nil {
		meta = mcp.Meta{}
	}
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
		meta[mcp.MetaKeyServerInfo] = info
	}
	out.Meta = meta
	return &out, nil
}

// writeAnswer writes a response as go-sdk's stateless handler writes
// it: an error that SEP-2575 maps to an HTTP status as a JSON body with
// that status, anything else as an SSE event.
func writeAnswer(w http.ResponseWriter, resp *jsonrpc.Response) {
	status := 0
	var rpcErr *jsonrpc.Error
	if errors.As(resp.Error, &rpcErr) {
		switch rpcErr.Code {
		case jsonrpc.CodeMethodNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
			status = http.StatusBadRequest
		}
	}
	if status == 0 {
		writeSSE(w, resp)
		return
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// writeSSE writes a response as the one event of an SSE stream, as
// go-sdk does, but leaves the stream to end when the handler returns,
// without flushing it first: go-sdk flushes the event and then ends the
// stream, two writes to the connection (the event's chunk, then the
// last chunk). Written at the end, a short answer goes out in one write,
// with a Content-Length in place of chunks; the same event either way.
func writeSSE(w http.ResponseWriter, resp *jsonrpc.Response) {
	const head, tail = "event: message\ndata: ", "\n\n"
	b := make([]byte, 0, len(head)+len(`{"jsonrpc":"2.0","id":,"result":}`)+20+len(resp.Result)+len(tail))
	b, err := appendResponse(append(b, head...), resp)
	if err != nil {
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	w.Write(append(b, tail...))
}

// appendResponse appends resp to b as go-sdk's jsonrpc.EncodeMessage
// encodes it. The paths' results are all encoding/json's output (theirs,
// or go-sdk's kept), compact already, which EncodeMessage would only copy
// through an encoder and its compaction, a pass over every byte (4 % of
// an in-process call's CPU at 8 clients, issue 27). So a result under a
// number ID, which is what clients send, is written as it is. An error,
// or an ID that is a string (to escape as go-sdk does), is
// EncodeMessage's. FuzzAppendResponse holds the two to the same bytes.
func appendResponse(b []byte, resp *jsonrpc.Response) ([]byte, error) {
	n, ok := resp.ID.Raw().(int64)
	if !ok || resp.Error != nil || len(resp.Result) == 0 {
		data, err := jsonrpc.EncodeMessage(resp)
		return append(b, data...), err
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, `,"result":`...)
	b = append(b, resp.Result...)
	return append(b, '}'), nil
}

// toolList returns go-sdk's tools/list result for a 2026-07-28 request
// without a cursor: kept from the last time go-sdk made it, or made by
// go-sdk now and kept, for as long as the tools are the same generation.
// go-sdk makes it for a request of r's context and Host, which accept
// has checked as go-sdk checks them: on a loopback listener, go-sdk's
// DNS rebinding protection refuses a request of another Host.
func (d *directPath) toolList(r *http.Request) (json.RawMessage, bool) {
	// The generation is read before go-sdk makes the list: a list made
	// while a sync ran is kept under the generation before the sync's,
	// and never served after it.
	gen := d.srv.tools.gen.Load()
	if c := d.list.Load(); c != nil && c.gen == gen {
		return c.result, true
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + modernRevision + `","` +
		mcp.MetaKeyClientCapabilities + `":{}}}}`
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, "/mcp", strings.NewReader(body))
	if err != nil {
		return nil, false
	}
	req.Host = r.Host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernRevision)
	req.Header.Set("Mcp-Method", "tools/list")
	rec := &recorder{header: http.Header{}}
	d.stateless.ServeHTTP(rec, req)
	result, ok := sseResult(rec.status, rec.header, rec.body.Bytes())
	if !ok {
		return nil, false
	}
	d.list.Store(&cachedList{gen: gen, result: result})
	return result, true
}

// sseResult returns the result of an answer that go-sdk framed as the one
// event of an SSE stream, or false for any other answer.
func sseResult(status int, header http.Header, body []byte) (json.RawMessage, bool) {
	data, ok := bytes.CutPrefix(body, []byte("event: message\ndata: "))
	if !ok || status != 0 && status != http.StatusOK || header.Get("Content-Type") != "text/event-stream" {
		return nil, false
	}
	data, ok = bytes.CutSuffix(data, []byte("\n\n"))
	if !ok || bytes.Contains(data, []byte("\n")) {
		return nil, false
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &resp) != nil || len(resp.Result) == 0 || resp.Error != nil {
		return nil, false
	}
	return resp.Result, true
}

// recorder keeps what go-sdk writes of the answer that fills the list.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) Flush()                      {}

// maxDirectDepth bounds the nesting of the params the path takes, well
// inside the 1000 levels at which go-sdk refuses them.
const maxDirectDepth = 64

// accept reads r and reports whether the direct path answers it exactly
// as go-sdk would. Each condition is one go-sdk's answer depends on; a
// request that fails any goes to go-sdk.
func (d *directPath) accept(r *http.Request) (directRequest, bool) {
	var q directRequest
	h := r.Header
	if !d.plainServer() || h.Get("MCP-Protocol-Version") != modernRevision || !plainPost(r, d.oauth) {
		return q, false
	}
	ctx := r.Context()
	q.caller, q.token = oauth.CallerFrom(ctx), sdkauth.TokenInfoFromContext(ctx)
	if (q.caller == nil) != (q.token == nil) {
		return q, false // not as NewHTTPHandler's middleware leaves them
	}
	// The message, as go-sdk reads it (message.go).
	req, ok := single(r).(*jsonrpc.Request)
	if !ok || !req.IsCall() || h.Get("Mcp-Method") != req.Method {
		return q, false
	}
	switch req.ID.Raw().(type) {
	case int64, string:
	default:
		return q, false
	}
	q.req = req
	if jsondepth.Of(req.Params) > maxDirectDepth {
		return q, false
	}
	var params plainParams
	if !readExactly(req.Params, &params) {
		return q, false
	}
	if q.declared, ok = plainMeta(params.Meta); !ok {
		return q, false
	}
	switch req.Method {
	case "tools/list":
		// An OAuth caller's list is its own (scopeFilter).
		return q, params.Name == nil && params.Arguments == nil && q.caller == nil
	case "tools/call":
	default:
		return q, false
	}
	p, ok := params.call(modernMeta())
	if !ok || !plainName(p.Name) || h.Get("Mcp-Name") != p.Name {
		return q, false
	}
	q.params = p
	return q, d.plainTool(p.Name, q.caller)
}

// modernMeta is the _meta of a call on a direct path, as the code after
// accept reads it: the revision (mcp.ServerRequest.ProtocolVersion). What
// the client declared it can be asked goes on the call's context
// (withDeclared); nothing reads the client's name there. A map of its
// own for each call, as go-sdk's reading makes one: whatever writes to a
// request's _meta later writes to that call's alone.
func modernMeta() mcp.Meta {
	return mcp.Meta{mcp.MetaKeyProtocolVersion: modernRevision}
}

// plainServer reports whether the server is as New made it: no
// middleware beyond New's and an open gate. With tracing, the paths
// record the span of each call they answer, as traceCalls does.
func (d *directPath) plainServer() bool {
	if d.srv.added.Load() {
		return false
	}
	if g := d.srv.gate.Load(); g != nil {
		if open, err := g.State(); !open || err != nil {
			return false
		}
	}
	return true
}

// plainPost reports whether r is a POST that go-sdk's handler, stateless
// or with sessions, takes as it comes: no Last-Event-ID, no OAuth unless
// callers, no hidden call, a Host its DNS rebinding protection lets
// through, a JSON body, and an Accept of both JSON and SSE.
func plainPost(r *http.Request, callers bool) bool {
	h := r.Header
	if r.Method != http.MethodPost || len(h.Values("Last-Event-ID")) > 0 {
		return false
	}
	ctx := r.Context()
	if !callers && (oauth.CallerFrom(ctx) != nil || sdkauth.TokenInfoFromContext(ctx) != nil) || ctx.Value(hiddenCallKey{}) != nil {
		return false
	}
	if local, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil && localLoopback(local) && !isLoopback(r.Host) {
		return false // go-sdk's DNS rebinding protection answers 403
	}
	// The Content-Type that clients send is read as it is; any other
	// spelling, as go-sdk reads it.
	if ct := h.Get("Content-Type"); ct != "application/json" {
		if ct, _, err := mime.ParseMediaType(ct); err != nil || ct != "application/json" {
			return false
		}
	}
	return acceptsBoth(h.Values("Accept"))
}

// plainTool reports whether the tool name is one that go-sdk serves with
// the handler and nothing else: registered with go-sdk, not deferred, not
// a task tool, without arguments in Mcp-Param-* headers (which go-sdk
// checks against the tool before any handler runs), and one the caller c
// (nil without OAuth) may call, which scopeFilter lets through.
func (d *directPath) plainTool(name string, c *oauth.Caller) bool {
	t, ok := d.rt.Snapshot().ByMCPName(name)
	if !ok || t.Tool.Deferred || t.Tool.Task != "" || runtime.AccessTo(c, t) != runtime.Callable {
		return false
	}
	for _, f := range t.Tool.Request.Fields {
		if f.MCPHeader != "" {
			return false
		}
	}
	tools := d.srv.tools
	tools.mu.Lock()
	_, served := tools.served[name]
	tools.mu.Unlock()
	return served
}

// plainMeta reports whether a request's _meta is the plain one of a
// 2026-07-28 client, and what its client declared it can be asked: the
// revision, the client's name and version, and its capabilities
// (plainCapabilities). A progress token, a log level, a trace context, or
// a value go-sdk might read otherwise, is go-sdk's.
func plainMeta(raw json.RawMessage) (declared, bool) {
	var meta struct {
		ProtocolVersion    json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
		ClientInfo         json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
		ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if !readExactly(raw, &meta) || string(meta.ProtocolVersion) != `"`+modernRevision+`"` {
		return declared{}, false
	}
	if meta.ClientInfo != nil {
		var info struct {
			Name    json.RawMessage `json:"name"`
			Version json.RawMessage `json:"version"`
			Title   json.RawMessage `json:"title"`
		}
		if !readExactly(meta.ClientInfo, &info) {
			return declared{}, false
		}
		for _, v := range [...]json.RawMessage{info.Name, info.Version, info.Title} {
			if v != nil && !plainString(v) {
				return declared{}, false
			}
		}
	}
	return plainCapabilities(meta.ClientCapabilities)
}

// plainCapabilities reports whether a request's clientCapabilities are
// ones go-sdk reads as the path does, and which of them let a handler ask:
// an object of the capabilities a client of tools declares (roots,
// sampling, elicitation, extensions, experimental), each of the type
// go-sdk decodes it into. Real clients declare some: go-sdk's own client
// declares roots. What they declare changes no answer the path makes
// itself; a handler's questions are asked by what it declared, on either
// path (mcpask.go), and a task tool, whose calls the Tasks extension
// changes, is go-sdk's.
func plainCapabilities(raw json.RawMessage) (declared, bool) {
	var caps struct {
		Roots        json.RawMessage `json:"roots"`
		Sampling     json.RawMessage `json:"sampling"`
		Elicitation  json.RawMessage `json:"elicitation"`
		Extensions   json.RawMessage `json:"extensions"`
		Experimental json.RawMessage `json:"experimental"`
	}
	if !readExactly(raw, &caps) {
		return declared{}, false
	}
	d := declared{roots: caps.Roots != nil, sampling: caps.Sampling != nil, elicitation: caps.Elicitation != nil}
	if caps.Sampling == nil && caps.Elicitation == nil && caps.Extensions == nil && caps.Experimental == nil {
		// {}, or go-sdk's client's roots: read without encoding/json.
		if caps.Roots == nil || plainRoots(caps.Roots) {
			return d, true
		}
	}
	for _, v := range [...]json.RawMessage{caps.Roots, caps.Sampling, caps.Elicitation, caps.Extensions, caps.Experimental} {
		if v != nil && v[0] != '{' {
			return declared{}, false
		}
	}
	// The shape go-sdk decodes them into (its clientCapabilitiesV2).
	var typed struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	return d, json.Unmarshal(raw, &typed) == nil
}

// plainRoots reports a roots capability that go-sdk's decoding takes,
// known without it: an object of listChanged alone, a boolean, as go-sdk's
// client declares it. Reading it this way in place of encoding/json's
// decoding into go-sdk's types took 2.7 % off an in-process 2026-07-28
// call's CPU at one client (issue 27); any other form is read as before.
func plainRoots(raw json.RawMessage) bool {
	var roots struct {
		ListChanged json.RawMessage `json:"listChanged"`
	}
	if raw == nil || !readExactly(raw, &roots) {
		return false
	}
	switch string(roots.ListChanged) {
	case "", "true", "false":
		return true
	}
	return false
}

// plainString reports a JSON string without escapes or bytes beyond
// printable ASCII, which every decoder reads alike.
func plainString(v json.RawMessage) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainName reports a tool name of the characters MCP names are made of.
func plainName(name string) bool {
	if name == "" || len(name) > runtime.MaxCallName {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// acceptsBoth reports whether Accept names both JSON and SSE, as go-sdk's
// handler requires of a POST.
func acceptsBoth(values []string) bool {
	jsonOK, sseOK := false, false
	for _, v := range values {
		for rest := v; rest != ""; {
			var part string
			part, rest, _ = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK && sseOK
}

// localLoopback is isLoopback of a listener's address, read from a TCP
// address's IP where it is one, without making its string.
func localLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return isLoopback(a.String())
}

// isLoopback reports whether an address (host and port, or a host) is
// the loopback one, as go-sdk's DNS rebinding protection reads it.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
