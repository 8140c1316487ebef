package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/tasks"
)

// stdioTasks serves the Tasks extension over stdio, in the filter in
// front of go-sdk (see stdio.go): tasks/get, tasks/update and tasks/cancel
// are answered by the filter, as serveTasks answers them over HTTP, and a
// subscriptions/listen that names tasks goes to go-sdk as any listen does,
// with its acknowledgement and result edited on their way out and the
// tasks' notifications written between go-sdk's lines (tasknotify.go).
// Over stdio there is one caller, the client that started toolc: its
// tasks are the owner "" ones, as without OAuth over HTTP.
type stdioTasks struct {
	m   *tasks.Manager
	out *lockedWriter
	ctx context.Context // the session's: it ends the followers

	mu      sync.Mutex
	listens map[string]*stdioListen // by the listen request's id, compact JSON
}

// stdioListen is one listen that names tasks.
type stdioListen struct {
	id      json.RawMessage
	agreed  []string
	started bool   // its acknowledgement went out, and its follower runs
	done    bool   // its follower ended
	held    []byte // its result line, written once done
}

// request answers a line of the extension's (its answer, and true), or
// notes a listen that names tasks, or leaves the line to go-sdk (nil and
// false).
func (s *stdioTasks) request(req *jsonrpc.Request, line []byte) ([]byte, bool) {
	if taskMethods[req.Method] && req.IsCall() {
		var p taskParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return rpcError(idOf(line), jsonrpc.CodeInvalidParams, "invalid params: "+err.Error()), true
		}
		if p.TaskID == nil {
			return rpcError(idOf(line), jsonrpc.CodeInvalidParams, req.Method+" needs params.taskId"), true
		}
		result, rpcErr := taskRequest(s.ctx, s.m, "", req.Method, p)
		if rpcErr != nil {
			return rpcErrorData(idOf(line), rpcErr), true
		}
		res, _ := json.Marshal(result)
		b, _ := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{"2.0", idOf(line), res})
		return append(b, '\n'), true
	}
	ids, meta := taskIDsOf(req)
	if len(ids) == 0 {
		return nil, false
	}
	if rpcErr := checkListen(ids, meta); rpcErr != nil {
		return rpcErrorData(idOf(line), rpcErr), true
	}
	id := compactJSON(idOf(line))
	s.mu.Lock()
	s.listens[string(id)] = &stdioListen{id: id, agreed: agreeTasks(s.ctx, s.m, "", ids)}
	s.mu.Unlock()
	return nil, false
}

// edit is what a line of go-sdk's becomes on its way out (lockedWriter):
// a listen's acknowledgement gains its task ids, and starts the listen's
// follower; a listen's result waits for the follower's end (nil: nothing
// to write now).
func (s *stdioTasks) edit(line []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.listens) == 0 {
		return line
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	switch {
	case m.Method == "notifications/subscriptions/acknowledged":
		l := s.listens[string(compactJSON(m.Params.Meta[mcp.MetaKeySubscriptionID]))]
		if l == nil || l.started {
			return line
		}
		ack, ok := withTaskIDs(bytes.TrimSpace(line), l.agreed)
		if !ok {
			return line
		}
		l.started = true
		f := &taskFollower{m: s.m, listen: l.id, ids: l.agreed, send: s.out.line}
		go func() {
			// Its first write waits for the lock the acknowledgement's
			// write holds: the notifications come after it.
			f.run(s.ctx)
			s.followed(l)
		}()
		return append(ack, '\n')
	case m.Method == "" && len(m.ID) > 0:
		key := string(compactJSON(m.ID))
		l := s.listens[key]
		if l == nil {
			return line
		}
		if !l.started || l.done {
			delete(s.listens, key) // an error, or its tasks ended: as it is
			return line
		}
		l.held = bytes.Clone(line)
		return nil
	}
	return line
}

// followed writes a listen's result, once its follower has ended, if
// go-sdk has answered it.
func (s *stdioTasks) followed(l *stdioListen) {
	s.mu.Lock()
	l.done = true
	held := l.held
	if held != nil {
		delete(s.listens, string(l.id))
	}
	s.mu.Unlock()
	if held != nil {
		s.out.release(held)
	}
}

// compactJSON is b without insignificant space, so that ids compare as
// values.
func compactJSON(b json.RawMessage) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// rpcErrorData encodes a JSON-RPC error response line with its data.
func rpcErrorData(id json.RawMessage, e *jsonrpc.Error) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data}})
	return append(b, '\n')
}
