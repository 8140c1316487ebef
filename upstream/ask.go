package upstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/plugins"
)

// An upstream server may ask its client something in the middle of a
// call: elicitation, sampling, roots. toolc is that client, and passes the
// question on to its own caller the way a Go handler's questions go (see
// package plugins): the call's round ends with the questions
// (InputRequests), the caller answers, over its session or as a 2026-07-28
// round, and the next round carries the answers. A Go handler runs again
// from the top; an upstream server cannot, as it waits for its answer in
// the middle of its call, so the call is parked between rounds, in this
// process, and the round that brings the answers resumes it.
//
// The server asks in one of two ways:
//
//   - at 2025-11-25 and before, as a request over the session
//     (elicitation/create, sampling/createMessage, roots/list). Over
//     Streamable HTTP the server sends it on the call's own stream, which
//     toolc reads to relate it (related.go); over stdio nothing relates
//     it to a call, and toolc passes it to the one call in flight on the
//     session, and refuses it, saying why, when several are;
//   - at 2026-07-28, as an InputRequiredResult of the call itself, which
//     toolc answers by calling again with the responses and the server's
//     requestState (multi round-trip requests).

// DefaultAnswerTimeout is how long a parked call waits for its caller's
// answers, when Options.AnswerTimeout is zero: as long as a requestState
// of toolc's is valid, long enough for a person to fill in a form.
const DefaultAnswerTimeout = 10 * time.Minute

// Bounds of the questions of one server.
const (
	// maxParked bounds the calls parked at once: each holds an upstream
	// call open, outside the service's call slots.
	maxParked = 64
	// maxUpstreamRounds bounds the InputRequiredResults of one call.
	maxUpstreamRounds = 10
	// questionPrefix starts the id of every question toolc passes on for
	// an upstream, so that a round whose answers are to such questions,
	// and find no call parked, is told why.
	questionPrefix = "upstream-"
)

// call is one call of an upstream tool, which may span several rounds of
// its caller's.
type call struct {
	// id marks the server's questions on the call's own stream (see
	// related.go).
	id   string
	tool string
	sess *session
	cs   *mcp.ClientSession
	// cancel ends the upstream call.
	cancel context.CancelFunc
	// input is what the current round's caller can answer; nil for a
	// caller that is not an MCP client.
	input atomic.Pointer[plugins.Input]
	// onEvent is the current round's progress callback, or nil.
	onEvent atomic.Pointer[func(plugins.Event)]
	// asks carries the server's questions to the round that waits.
	asks chan *ask
	// done has the call's outcome, once; ended is closed after.
	done  chan outcome
	ended chan struct{}
}

type outcome struct {
	res *mcp.CallToolResult
	err error
}

// ask is one or more questions the server asked at once, and where their
// answers go, in the questions' order.
type ask struct {
	qs    []plugins.InputRequest
	reply chan askReply // buffered: the asker may have gone
}

type askReply struct {
	answers []json.RawMessage
	err     error
}

// parked is a call waiting between rounds for the answers to its ask.
type parked struct {
	c     *call
	a     *ask
	timer *time.Timer
}

// put asks the call's caller qs, and waits for the answers, the call's
// end, or ctx's.
func (c *call) put(ctx context.Context, qs []plugins.InputRequest) ([]json.RawMessage, error) {
	a := &ask{qs: qs, reply: make(chan askReply, 1)}
	select {
	case c.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ended:
		return nil, errors.New("the call ended")
	}
	select {
	case r := <-a.reply:
		return r.answers, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ended:
		return nil, errors.New("the call ended")
	}
}

// lacking returns the capability that in lacks for q, or "".
func lacking(in *plugins.Input, q plugins.InputRequest) string {
	var has bool
	var name string
	switch q.Method {
	case plugins.MethodElicit:
		name, has = "elicitation", in != nil && in.Elicitation
	case plugins.MethodCreateMessage:
		name, has = "sampling", in != nil && in.Sampling
	case plugins.MethodListRoots:
		name, has = "roots", in != nil && in.Roots
	default:
		return q.Method
	}
	if has {
		return ""
	}
	return name
}

func newQuestionID() string {
	var b [12]byte
	rand.Read(b[:])
	return questionPrefix + hex.EncodeToString(b[:])
}

// register counts c among the calls in flight, which the server's
// requests are related to.
func (s *Server) register(c *call) {
	s.callsMu.Lock()
	s.calls[c] = struct{}{}
	s.callsMu.Unlock()
}

func (s *Server) unregister(c *call) {
	s.callsMu.Lock()
	delete(s.calls, c)
	s.callsMu.Unlock()
}

// metaOf returns the _meta of a request's params, which may be a nil
// pointer: roots/list, above all, comes with no params.
func metaOf(p mcp.Params) map[string]any {
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// callByID returns the call in flight with the id, or nil.
func (s *Server) callByID(id string) *call {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	for c := range s.calls {
		if c.id == id {
			return c
		}
	}
	return nil
}

// callOf returns the call a request of the server over cs is for: the
// one call in flight on cs.
func (s *Server) callOf(cs *mcp.ClientSession, method string) (*call, error) {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	var found *call
	n := 0
	for c := range s.calls {
		if c.cs == cs {
			found = c
			n++
		}
	}
	switch n {
	case 1:
		return found, nil
	case 0:
		return nil, fmt.Errorf("toolc passes %s on to the client of a call in flight, and none of this server's is", method)
	}
	return nil, fmt.Errorf("toolc cannot tell which of its %d calls in flight to this server asks %s: the request came on no call's own stream (over stdio MCP relates a server's request to no call); ask at 2026-07-28 (an InputRequiredResult), over Streamable HTTP on the call's stream, or while one call runs", n, method)
}

// askMiddleware answers the server's requests to its client by passing
// them to the caller of the call they are for.
func (s *Server) askMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var res mcp.Result
		switch method {
		case plugins.MethodElicit:
			res = &mcp.ElicitResult{}
		case plugins.MethodCreateMessage:
			res = &mcp.CreateMessageResult{}
		case plugins.MethodListRoots:
			res = &mcp.ListRootsResult{}
		default:
			return next(ctx, method, req)
		}
		cs, _ := req.GetSession().(*mcp.ClientSession)
		var c *call
		if meta := metaOf(req.GetParams()); meta != nil {
			if id, ok := meta[relatedKey].(string); ok {
				c = s.callByID(id)
			}
			delete(meta, relatedKey) // toolc's, not the question's
		}
		if c == nil {
			var err error
			if c, err = s.callOf(cs, method); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
			}
		}
		params, err := json.Marshal(req.GetParams())
		if err != nil {
			return nil, err
		}
		answers, err := c.put(ctx, []plugins.InputRequest{{ID: newQuestionID(), Method: method, Params: params}})
		var missing *plugins.MissingCapabilityError
		switch {
		case errors.As(err, &missing):
			return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: err.Error()}
		case err != nil:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		if err := json.Unmarshal(answers[0], res); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the client's answer to %s does not decode: %v", method, err)}
		}
		return res, nil
	}
}

// drive runs the upstream call of c until it has a result, answering its
// InputRequiredResults through c, and hands the outcome to c.done.
func (s *Server) drive(ctx context.Context, c *call, params *mcp.CallToolParams) {
	defer s.sup.Release()
	defer close(c.ended)
	defer s.unregister(c)
	defer c.cancel()
	for round := 1; ; round++ {
		res, err := c.cs.CallTool(ctx, params)
		if err != nil || !res.NeedsInput() {
			c.done <- outcome{res, err}
			return
		}
		if len(res.InputRequests) == 0 || round == maxUpstreamRounds {
			c.done <- outcome{err: &askError{fmt.Errorf("the upstream server asked for input %d times without finishing the call (or was too busy to take it)", round)}}
			return
		}
		var qs []plugins.InputRequest
		var keys []string
		for key, ir := range res.InputRequests {
			method, err := methodOf(ir)
			if err == nil {
				var b []byte
				b, err = json.Marshal(ir)
				qs = append(qs, plugins.InputRequest{ID: newQuestionID(), Method: method, Params: b})
			}
			if err != nil {
				c.done <- outcome{err: &askError{fmt.Errorf("the upstream server asked for input toolc cannot pass on: %v", err)}}
				return
			}
			keys = append(keys, key)
		}
		answers, err := c.put(ctx, qs)
		if err != nil {
			c.done <- outcome{err: &askError{err}}
			return
		}
		responses := mcp.InputResponseMap{}
		for i, key := range keys {
			var r mcp.InputResponseMap
			raw, _ := json.Marshal(map[string]json.RawMessage{key: answers[i]})
			if err := json.Unmarshal(raw, &r); err != nil {
				c.done <- outcome{err: &askError{fmt.Errorf("the client's answer to %s does not decode: %v", qs[i].Method, err)}}
				return
			}
			responses[key] = r[key]
		}
		next := *params
		next.InputResponses, next.RequestState = responses, res.RequestState
		params = &next
	}
}

// askError is the failure of a call's questions, rather than of its
// session: the call fails, and the server goes on.
type askError struct{ err error }

func (e *askError) Error() string { return e.err.Error() }
func (e *askError) Unwrap() error { return e.err }

func methodOf(ir mcp.InputRequest) (string, error) {
	switch ir.(type) {
	case *mcp.ElicitParams:
		return plugins.MethodElicit, nil
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return plugins.MethodCreateMessage, nil
	case *mcp.ListRootsParams:
		return plugins.MethodListRoots, nil
	}
	return "", fmt.Errorf("an input request of type %T", ir)
}

// resume finds the call parked for the answers of in, if any. A round
// whose answers are to questions of an upstream's and finds no call
// parked for them is told why.
func (s *Server) resume(tool string, in *plugins.Input) (*call, *plugins.Result) {
	if in == nil || len(in.Answers) == 0 {
		return nil, nil
	}
	byID := map[string]plugins.Answer{}
	ours := false
	for _, a := range in.Answers {
		byID[a.ID] = a
		if len(a.ID) > len(questionPrefix) && a.ID[:len(questionPrefix)] == questionPrefix {
			ours = true
		}
	}
	s.parkMu.Lock()
	var p *parked
	for _, a := range in.Answers {
		if p = s.parked[a.ID]; p != nil {
			break
		}
	}
	if p == nil {
		s.parkMu.Unlock()
		if !ours {
			return nil, nil
		}
		return nil, plugins.Errorf("%s: the call that asked these questions is no longer waiting for their answers: it waited longer than %s, ended, or is waiting on another toolc replica (an upstream server's question holds its call open in one process); call the tool again", tool, s.answerTimeout())
	}
	if p.c.tool != tool {
		s.parkMu.Unlock()
		return nil, plugins.Errorf("%s: the answers are to questions of another tool's call", tool)
	}
	answers := make([]json.RawMessage, len(p.a.qs))
	var missing []plugins.InputRequest
	for i, q := range p.a.qs {
		a, ok := byID[q.ID]
		if !ok || string(a.ParamsSHA256) != string(q.ParamsHash()) {
			missing = append(missing, q)
			continue
		}
		answers[i] = a.Result
	}
	if len(missing) > 0 {
		s.parkMu.Unlock()
		return nil, &plugins.Result{InputRequests: missing}
	}
	for _, q := range p.a.qs {
		delete(s.parked, q.ID)
	}
	s.parkMu.Unlock()
	p.timer.Stop()
	p.a.reply <- askReply{answers: answers}
	return p.c, nil
}

// park holds c, whose server asked a, until a round brings the answers,
// or the answer timeout ends it.
func (s *Server) park(c *call, a *ask) *plugins.Result {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	if len(s.parked) >= maxParked*4 || s.parkedCalls() >= maxParked {
		a.reply <- askReply{err: fmt.Errorf("toolc has %d calls of this server waiting for their clients' answers already", maxParked)}
		return nil
	}
	p := &parked{c: c, a: a}
	p.timer = time.AfterFunc(s.answerTimeout(), func() {
		s.parkMu.Lock()
		if s.parked[a.qs[0].ID] != p {
			s.parkMu.Unlock()
			return // resumed: the round that did it answers
		}
		for _, q := range a.qs {
			delete(s.parked, q.ID)
		}
		s.parkMu.Unlock()
		a.reply <- askReply{err: fmt.Errorf("the client did not answer within %s", s.answerTimeout())}
		c.cancel()
	})
	for _, q := range a.qs {
		s.parked[q.ID] = p
	}
	return &plugins.Result{InputRequests: a.qs}
}

// parkedCalls counts the calls parked. s.parkMu is held.
func (s *Server) parkedCalls() int {
	seen := map[*call]bool{}
	for _, p := range s.parked {
		seen[p.c] = true
	}
	return len(seen)
}

func (s *Server) answerTimeout() time.Duration {
	if s.opts.AnswerTimeout > 0 {
		return s.opts.AnswerTimeout
	}
	return DefaultAnswerTimeout
}

// await waits, for one round, for c's outcome or its server's questions.
// Questions the round's caller can answer end the round with them, the
// call parked; one it cannot is answered with the missing capability. A
// round that ends first ends the call.
func (s *Server) await(ctx context.Context, c *call) (outcome, *plugins.Result) {
	for {
		select {
		case out := <-c.done:
			return out, nil
		case a := <-c.asks:
			in := c.input.Load()
			lack := ""
			for _, q := range a.qs {
				if lack = lacking(in, q); lack != "" {
					break
				}
			}
			if lack != "" {
				a.reply <- askReply{err: &plugins.MissingCapabilityError{Capability: lack}}
				continue
			}
			if res := s.park(c, a); res != nil {
				return outcome{}, res
			}
		case <-ctx.Done():
			c.cancel()
			return <-c.done, nil
		}
	}
}
