package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/reqstate"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// A handler's questions (plugins.Elicit, Sample, Roots) reach the client
// in one of two ways, and in both the handler runs again, from the top,
// with the answers it has (see package plugins):
//
//   - a 2026-07-28 request gets an InputRequiredResult: the questions, and
//     a requestState sealed under the server's key that remembers which
//     questions were asked and the answers of earlier rounds. Nothing is
//     kept in the process, so the client's next round may reach any
//     replica that shares the key.
//   - a request of an older revision, in a session, is answered over the
//     session (elicitation/create, sampling/createMessage, roots/list)
//     while the call waits, and the handler runs again in the same call.

// DefaultStateTTL is how long a requestState is accepted, when
// Options.StateTTL is zero: long enough for a person to fill in a form.
const DefaultStateTTL = 10 * time.Minute

// maxRelayRounds bounds the rounds of one call of a legacy session: a
// handler that asks again after every answer is not waiting for its
// client any more.
const maxRelayRounds = 8

// asker carries a server's state key to its tool handlers.
type asker struct {
	key *reqstate.Key
	ttl time.Duration
	now func() time.Time

	// waits cancel the questions of legacy sessions that wait for their
	// client's answer, by session ID (see endSession).
	mu    sync.Mutex
	waits map[string]map[*int]context.CancelFunc
}

// waiting returns the context of a question of session id, which
// endSession cancels, and the function that forgets it once answered.
func (k *asker) waiting(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key := new(int)
	k.mu.Lock()
	if k.waits == nil {
		k.waits = map[string]map[*int]context.CancelFunc{}
	}
	if k.waits[id] == nil {
		k.waits[id] = map[*int]context.CancelFunc{}
	}
	k.waits[id][key] = cancel
	k.mu.Unlock()
	return ctx, func() {
		cancel()
		k.mu.Lock()
		delete(k.waits[id], key)
		if len(k.waits[id]) == 0 {
			delete(k.waits, id)
		}
		k.mu.Unlock()
	}
}

// endSession gives up the questions of session id that wait for an
// answer, as the session closes. go-sdk's ServerSession.Close waits for
// the handlers in flight, and a handler waiting for an answer that its
// client, gone, never sends would hold the close (and whatever waits for
// it: the initialize of the client whose session made the cap close this
// one) for ever.
func (k *asker) endSession(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, cancel := range k.waits[id] {
		cancel()
	}
}

func newAsker(opts Options, logger *slog.Logger) *asker {
	secret := opts.StateSecret
	if secret == nil {
		secret = reqstate.GenerateSecret()
	}
	key, err := reqstate.NewKey(secret)
	if err != nil {
		// cmd/toolc checks the key before it gets here; an embedder who
		// passes a short one is told, and served under a key of its own.
		logger.Error("unusable requestState key; using a generated one, which no other replica shares", "error", err)
		key, _ = reqstate.NewKey(reqstate.GenerateSecret())
	}
	ttl := opts.StateTTL
	if ttl <= 0 {
		ttl = DefaultStateTTL
	}
	return &asker{key: key, ttl: ttl, now: time.Now}
}

// exchange is one request whose handler may ask its client something: a
// tools/call, or a prompts/get of a prompt served by a handler. Both ask
// back the same way; what differs is what the request is about (subject)
// and how its handler runs.
type exchange struct {
	// subject is what a requestState of the request is bound to: a
	// tool's MCP name, or plugins.PromptPrefix and a prompt's name (no
	// MCP name holds a colon), so that a tool's state never resumes a
	// prompt of the same name.
	subject   string
	kind      string // "tool" or "prompt", for messages
	args      json.RawMessage
	version   string // the request's protocol revision
	state     string // the requestState it carries
	responses mcp.InputResponseMap
	caller    *oauth.Caller
	session   *mcp.ServerSession
	in        *plugins.Input // what the client can answer, and the answers so far
}

// newExchange reads what asking back needs from a request of either kind.
func newExchange[P mcp.Params](ctx context.Context, req *mcp.ServerRequest[P], kind, subject string, args json.RawMessage, state string, responses mcp.InputResponseMap) *exchange {
	in := &plugins.Input{}
	if d, ok := ctx.Value(declaredKey{}).(declared); ok {
		in.Elicitation, in.Sampling, in.Roots = d.elicitation, d.sampling, d.roots
	} else if caps := req.ClientCapabilities(); caps != nil {
		in.Elicitation = caps.Elicitation != nil
		in.Sampling = caps.Sampling != nil
		in.Roots = caps.RootsV2 != nil
	}
	return &exchange{
		subject: subject, kind: kind, args: args, version: req.ProtocolVersion(), state: state, responses: responses,
		caller: callerOf(req), session: req.Session, in: in,
	}
}

// toolExchange is the exchange of a tools/call.
func toolExchange(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage) *exchange {
	return newExchange(ctx, req, "tool", name, args, req.Params.RequestState, req.Params.InputResponses)
}

// declared is what the client of a 2026-07-28 request on a direct path
// declared it can be asked: the keys of its clientCapabilities, which
// plainCapabilities has checked are objects of go-sdk's types, so that
// each is there exactly when go-sdk's reading (ClientCapabilities) has it.
// That reading encodes the capabilities and decodes them again, with a
// 32 KiB decoder buffer, on every call: the direct paths put what they
// read on the call's context instead (declaredKey), for newExchange.
type declared struct{ elicitation, sampling, roots bool }

type declaredKey struct{}

// withDeclared returns ctx with what the plain _meta of a direct path's
// request declares (plainMeta).
func withDeclared(ctx context.Context, d declared) context.Context {
	return context.WithValue(ctx, declaredKey{}, d)
}

// asked is how an exchange ended: with the handler's result, or with the
// questions to send back and the requestState that remembers them.
type asked struct {
	res       *runtime.Result
	questions mcp.InputRequestMap
	state     string
}

// call runs a tool for an MCP request, with as many rounds of questions
// as the handler needs and the request's revision allows.
func (s *mcpTools) call(ctx context.Context, name string, req *mcp.CallToolRequest, args json.RawMessage, onEvent func(runtime.Event)) (*mcp.CallToolResult, error) {
	x := toolExchange(ctx, req, name, args)
	out, err := s.ask.settle(ctx, x, func(ctx context.Context, in *plugins.Input) (*runtime.Result, error) {
		return s.run(ctx, name, args, in, onEvent)
	})
	switch {
	case err != nil:
		return nil, err
	case out.res != nil:
		return toResult(out.res), nil
	}
	return &mcp.CallToolResult{InputRequests: out.questions, RequestState: out.state}, nil
}

// settle runs a handler with as many rounds of questions as it needs and
// the request's revision allows: a 2026-07-28 request in rounds under a
// requestState, an older one over its session.
func (k *asker) settle(ctx context.Context, x *exchange, run func(context.Context, *plugins.Input) (*runtime.Result, error)) (*asked, error) {
	if x.version >= modernRevision {
		return k.round(ctx, x, run)
	}
	return k.relay(ctx, x, run)
}

// round serves one round of a 2026-07-28 request: it opens the
// requestState, hands the handler the answers to the questions that state
// asked, and answers with the result, or with the next questions and a
// new state.
//
// A response to a question the handler asks while serving this request
// answers it too, without a state: a client may send the answer to a
// question it knows will come (the spec asks a server to use what it
// recognizes in inputResponses and ignore the rest). The question is the
// handler's, asked now, so the answer is held to the question's own method
// and form, exactly as an answer under a state is; what the client sends
// decides only the answer, which it decides in any round. Each response
// answers one question once, and a response under the id of a question
// the state carries is that question's, so a client cannot re-answer an
// earlier round.
func (k *asker) round(ctx context.Context, x *exchange, run func(context.Context, *plugins.Input) (*runtime.Result, error)) (*asked, error) {
	used, err := k.open(x)
	if err != nil {
		return nil, err
	}
	var res *runtime.Result
	for n := 1; ; n++ {
		var err error
		res, err = run(ctx, x.in)
		if err != nil {
			return nil, callError(err)
		}
		switch {
		case res.MissingCapability != "":
			return nil, missingCapability(x.kind, res)
		case len(res.InputRequests) == 0:
			return &asked{res: res}, nil
		}
		// Every run but the last takes at least one response, so the
		// runs of one request are bounded by its responses too.
		if n == maxRelayRounds || !answerAsked(res.InputRequests, x.responses, used, x.in) {
			break
		}
	}
	return k.askBack(x, res), nil
}

// open opens the requestState of a 2026-07-28 request, if it has one, and
// puts in x.in the answers it carries and those of the request that
// answer its questions. It returns the response keys that answered, or
// could only answer, a question of the state.
func (k *asker) open(x *exchange) (map[string]bool, error) {
	used := map[string]bool{}
	if x.state == "" {
		return used, nil
	}
	st, err := k.key.Open(x.state, x.subject, reqstate.ArgsDigest(x.args), callerDigest(x.caller), k.now())
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	x.in.Answers = answersOf(st, x.responses)
	for _, a := range st.Answers {
		used[a.ID] = true
	}
	for _, q := range st.Asked {
		used[q.ID] = true
	}
	return used, nil
}

// askBack ends a 2026-07-28 request whose handler asked questions: the
// questions, and a new requestState that seals them with the answers of
// the earlier rounds. A question MCP cannot carry, or a state that cannot
// be sealed, ends it with the handler's error instead.
func (k *asker) askBack(x *exchange, res *runtime.Result) *asked {
	next := &reqstate.State{Tool: x.subject, Args: reqstate.ArgsDigest(x.args), Caller: callerDigest(x.caller), Expires: k.now().Add(k.ttl).Unix()}
	for _, a := range x.in.Answers {
		next.Answers = append(next.Answers, reqstate.Answer{ID: a.ID, Params: a.ParamsSHA256, Result: a.Result})
	}
	questions := mcp.InputRequestMap{}
	for _, q := range res.InputRequests {
		ir, err := toInputRequest(q)
		if err != nil {
			return &asked{res: plugins.Errorf("the handler of %s asked a question MCP cannot carry: %v", x.subject, err)}
		}
		questions[q.ID] = ir
		asked := reqstate.Question{ID: q.ID, Method: q.Method, Params: q.ParamsHash()}
		asked.Schema = formSchema(ir)
		next.Asked = append(next.Asked, asked)
	}
	token, err := k.key.Seal(next)
	if err != nil {
		return &asked{res: plugins.Errorf("%s: %v", x.subject, err)}
	}
	return &asked{questions: questions, state: token}
}

// callerDigest is the identity a requestState is bound to: its OAuth
// caller's, or nil without OAuth (one --token is one caller).
func callerDigest(c *oauth.Caller) []byte {
	if c == nil {
		return nil
	}
	return reqstate.CallerDigest(c.Subject, c.ClientID)
}

// answerAsked adds to in the responses that answer questions the handler
// has just asked, and reports whether it added any. A response is taken
// once, and only when it is of the question's kind and fits its form.
func answerAsked(asked []plugins.InputRequest, responses mcp.InputResponseMap, used map[string]bool, in *plugins.Input) bool {
	added := false
	for _, q := range asked {
		r, ok := responses[q.ID]
		if !ok || used[q.ID] {
			continue
		}
		used[q.ID] = true
		ir, err := toInputRequest(q)
		if err != nil {
			continue
		}
		if b, ok := answerTo(q.Method, formSchema(ir), r); ok {
			in.Answers = append(in.Answers, plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: b})
			added = true
		}
	}
	return added
}

// formSchema is the requested schema of a form question, as JSON, or nil.
func formSchema(ir mcp.InputRequest) json.RawMessage {
	if p, ok := ir.(*mcp.ElicitParams); ok && p.RequestedSchema != nil {
		b, _ := json.Marshal(p.RequestedSchema)
		return b
	}
	return nil
}

// answersOf returns the answers a round may use: those carried in the
// state, and the client's answers to the questions the state says were
// asked, of the kind each question asks for, and for a form, with values
// that match its schema (as go-sdk checks an answer over a session). Any
// other answer is one to a question this server never asked, or not an
// answer to it, and is dropped: the handler asks again.
func answersOf(st *reqstate.State, responses mcp.InputResponseMap) []plugins.Answer {
	var out []plugins.Answer
	for _, a := range st.Answers {
		out = append(out, plugins.Answer{ID: a.ID, ParamsSHA256: a.Params, Result: a.Result})
	}
	for _, q := range st.Asked {
		r, ok := responses[q.ID]
		if !ok {
			continue
		}
		if b, ok := answerTo(q.Method, q.Schema, r); ok {
			out = append(out, plugins.Answer{ID: q.ID, ParamsSHA256: q.Params, Result: b})
		}
	}
	return out
}

// answerTo returns r as JSON when it answers a question of the method
// with the form schema (nil for none).
func answerTo(method string, schema json.RawMessage, r mcp.InputResponse) (json.RawMessage, bool) {
	if !answers(method, r) || !fitsForm(schema, r) {
		return nil, false
	}
	b, err := json.Marshal(r)
	return b, err == nil
}

// answers reports whether r is a result of the question's method.
func answers(method string, r mcp.InputResponse) bool {
	switch r.(type) {
	case *mcp.ElicitResult:
		return method == plugins.MethodElicit
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return method == plugins.MethodCreateMessage
	case *mcp.ListRootsResult:
		return method == plugins.MethodListRoots
	}
	return false
}

// fitsForm reports whether an accepted elicitation's values match the
// form's schema; other answers fit trivially.
func fitsForm(schema json.RawMessage, r mcp.InputResponse) bool {
	e, ok := r.(*mcp.ElicitResult)
	if !ok || len(schema) == 0 || e.Action != "accept" {
		return true
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return false
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return false
	}
	content := map[string]any{}
	for k, v := range e.Content {
		content[k] = v
	}
	return resolved.Validate(content) == nil
}

// toInputRequest decodes a handler's question into go-sdk's type.
func toInputRequest(q plugins.InputRequest) (mcp.InputRequest, error) {
	var ir mcp.InputRequest
	switch q.Method {
	case plugins.MethodElicit:
		ir = &mcp.ElicitParams{}
	case plugins.MethodCreateMessage:
		ir = &mcp.CreateMessageParams{}
	case plugins.MethodListRoots:
		ir = &mcp.ListRootsParams{}
	default:
		return nil, fmt.Errorf("unknown method %q", q.Method)
	}
	if err := json.Unmarshal(q.Params, ir); err != nil {
		return nil, fmt.Errorf("%s %s: %v", q.Method, q.ID, err)
	}
	return ir, nil
}

// relay serves a request of a legacy session: it asks the client each
// question over the session and runs the handler again with the answers.
func (k *asker) relay(ctx context.Context, x *exchange, run func(context.Context, *plugins.Input) (*runtime.Result, error)) (*asked, error) {
	for round := 1; ; round++ {
		res, err := run(ctx, x.in)
		if err != nil {
			return nil, callError(err)
		}
		switch {
		case res.MissingCapability != "":
			return nil, missingCapability(x.kind, res)
		case len(res.InputRequests) == 0:
			return &asked{res: res}, nil
		case round == maxRelayRounds:
			return &asked{res: plugins.Errorf("%s asked its client questions in %d rounds without finishing", x.subject, round)}, nil
		}
		if ctx.Value(noQuestionsKey{}) != nil {
			return nil, errWouldAsk // the session path's call: go-sdk asks (sessdirect.go)
		}
		for _, q := range res.InputRequests {
			qctx, answered := k.waiting(ctx, x.session.ID())
			answer, err := askSession(qctx, x.session, q)
			answered()
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return &asked{res: plugins.Errorf("%s asked the client (%s %s), which did not answer: %v", x.subject, q.Method, q.ID, err)}, nil
			}
			x.in.Answers = append(x.in.Answers, plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: answer})
		}
	}
}

// askSession sends one question over a legacy session, and returns the
// client's answer as JSON.
func askSession(ctx context.Context, ss *mcp.ServerSession, q plugins.InputRequest) (json.RawMessage, error) {
	ir, err := toInputRequest(q)
	if err != nil {
		return nil, err
	}
	var res any
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		res, err = ss.Elicit(ctx, p)
	case *mcp.CreateMessageParams:
		res, err = ss.CreateMessage(ctx, p)
	case *mcp.ListRootsParams:
		res, err = ss.ListRoots(ctx, p)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// callError is the JSON-RPC error for a call that did not finish.
func callError(err error) error {
	if errors.Is(err, runtime.ErrUnknownTool) {
		// Removed by a reload between the client's list and its call.
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return err
}

// missingCapability is MCP's MissingRequiredClientCapability error
// (SEP-2575) for a handler that needed a capability the client lacks.
func missingCapability(kind string, res *runtime.Result) error {
	data, _ := json.Marshal(map[string]any{
		"requiredCapabilities": map[string]any{res.MissingCapability: map[string]any{}},
	})
	return &jsonrpc.Error{
		Code:    mcp.CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("the %s needs the client's %s capability, which the client did not declare", kind, res.MissingCapability),
		Data:    data,
	}
}
