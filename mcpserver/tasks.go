package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
)

// The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on MCP
// 2026-07-28, with a tasks.Manager (Options.Tasks and HTTPOptions.Tasks):
//
//   - server/discover declares the extension under capabilities.extensions;
//   - a tools/call of a tool with task: "optional" or "required", from a
//     request that declares the extension in its clientCapabilities, starts
//     through the Manager, and is answered with a CreateTaskResult when it
//     becomes a task (taskCalls, a receiving middleware: go-sdk's tool
//     handlers return only CallToolResult). From any other request, an
//     "optional" tool runs as a plain call, and a "required" one is error
//     -32021 naming the extension;
//   - tasks/get, tasks/update and tasks/cancel are served here, before
//     go-sdk, which knows no such methods (serveTasks).
//
// The extension is not defined for the earlier revisions, whose requests
// never get a task. Waits for go-sdk: the Tasks extension.

// tasksExtension is the extension's name, its key in capabilities.
const tasksExtension = "io.modelcontextprotocol/tasks"

// declaresTasks reports whether a request declares the extension: a
// 2026-07-28 request whose clientCapabilities name it.
func declaresTasks(req *mcp.CallToolRequest) bool {
	if req.ProtocolVersion() < modernRevision {
		return false
	}
	caps := req.ClientCapabilities()
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// missingTasks is the error for a request that needs the extension and
// did not declare it.
func missingTasks(what string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{
		Code:    mcp.CodeMissingRequiredClientCapabilities,
		Message: what + " needs the client capability extensions[\"" + tasksExtension + "\"], which the request did not declare",
		Data:    data,
	}
}

// taskCalls sends the calls of task tools through the Manager.
func (s *mcpTools) taskCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		info, ok := s.rt.Snapshot().ByMCPName(call.Params.Name)
		if !ok || info.Tool.Task == "" {
			return next(ctx, method, req)
		}
		switch {
		case s.tasks != nil && declaresTasks(call):
			return s.startTask(ctx, call, next)
		case info.Tool.Task == catalog.TaskRequired:
			return nil, missingTasks(fmt.Sprintf("tool %s runs only as a task: it", runtime.QuoteName(call.Params.Name)))
		}
		return next(ctx, method, req)
	}
}

// startTask serves a call of a task tool from a client of the extension:
// its answer is the call's (a result, or questions with a requestState)
// when it ends within the Manager's Window, and otherwise a
// CreateTaskResult. The questions of a call that has not become a task
// are settled over MRTR, on the request, as the extension asks.
func (s *mcpTools) startTask(ctx context.Context, req *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	name := req.Params.Name
	args := req.Params.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if extra := req.Extra; extra != nil && extra.Header != nil {
		ctx = runtime.WithArgumentCheck(ctx, paramHeaderCheck(extra.Header, true))
	}
	x := toolExchange(ctx, req, name, args)
	if _, err := s.ask.open(x); err != nil {
		return nil, err
	}
	res, task, err := s.tasks.Start(ctx, tasks.Call{Owner: ownerOf(callerOf(req)), Tool: name, Args: args, Input: x.in, OnEvent: s.events(ctx, req)})
	switch {
	case errors.Is(err, tasks.ErrTooMany):
		res, err = plugins.Errorf("%s was not run: %v", name, err), nil
	case task != nil:
		return &createTaskResult{ResultType: "task", wireTask: wireOf(task)}, nil
	}
	// The call ended within the Window: go-sdk's tool handler answers it
	// with this outcome as its first run, exactly as a plain call's.
	return next(context.WithValue(ctx, firstRunKey{}, &firstRun{res: res, err: err}), "tools/call", req)
}

// firstRun is the outcome of a call's first run, made by the Manager,
// for the tool handler to answer with (run).
type firstRun struct {
	res  *runtime.Result
	err  error
	used bool
}

type firstRunKey struct{}

// run runs the handler for one round of a call: the first run of a task
// tool's call has run already, through the Manager.
func (s *mcpTools) run(ctx context.Context, name string, args json.RawMessage, in *plugins.Input, onEvent func(runtime.Event)) (*runtime.Result, error) {
	if f, ok := ctx.Value(firstRunKey{}).(*firstRun); ok && !f.used {
		f.used = true
		return f.res, f.err
	}
	return s.rt.CallWithEvents(plugins.WithInput(ctx, in), name, args, onEvent)
}

// ownerOf is the owner of the tasks of an OAuth caller, or of every
// caller without OAuth (nil).
func ownerOf(c *oauth.Caller) string {
	if c == nil {
		return ""
	}
	return tasks.Owner(c.Subject, c.ClientID)
}

// wireTask is the extension's Task, as every task message carries it.
type wireTask struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

func wireOf(t *taskstore.Task) wireTask {
	return wireTask{
		TaskID: t.ID, Status: string(t.Status), StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTLMs: t.TTL.Milliseconds(), PollIntervalMs: t.PollInterval.Milliseconds(),
	}
}

// createTaskResult is CreateTaskResult: the Task, flat, with resultType
// "task".
type createTaskResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	wireTask
}

// detailedTask is tasks/get's result: the Task with what its status
// carries, the result, the error or the questions.
type detailedTask struct {
	ResultType string `json:"resultType"`
	wireTask
	Result        json.RawMessage     `json:"result,omitempty"`
	Error         *taskstore.Error    `json:"error,omitempty"`
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
}

func detailOf(t *taskstore.Task) (*detailedTask, error) {
	d := &detailedTask{ResultType: "complete", wireTask: wireOf(t)}
	switch t.Status {
	case taskstore.Completed:
		var res plugins.Result
		if err := json.Unmarshal(t.Result, &res); err != nil {
			return nil, fmt.Errorf("reading the task's result: %w", err)
		}
		b, err := json.Marshal(toResult(&res))
		if err != nil {
			return nil, err
		}
		d.Result = b
	case taskstore.Failed:
		d.Error = t.Error
		if d.Error == nil {
			d.Error = &taskstore.Error{Code: jsonrpc.CodeInternalError, Message: "the task failed"}
		}
	case taskstore.InputRequired:
		d.InputRequests = mcp.InputRequestMap{}
		for _, q := range t.Questions {
			ir, err := toInputRequest(q)
			if err != nil {
				return nil, err
			}
			d.InputRequests[q.ID] = ir
		}
	}
	return d, nil
}

// taskMethods are the extension's methods. tasks/result and tasks/list,
// of the earlier experimental tasks, are left to go-sdk, which answers
// them -32601 as the extension asks.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// taskParams are the params of the extension's methods.
type taskParams struct {
	Meta           map[string]json.RawMessage `json:"_meta"`
	TaskID         *string                    `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// serveTasks serves a 2026-07-28 request for tasks/get, tasks/update or
// tasks/cancel, and reports whether r was one.
func (e *mcpEndpoint) serveTasks(w http.ResponseWriter, r *http.Request) bool {
	if e.tasks == nil || r.Method != http.MethodPost {
		return false
	}
	req, ok := single(r).(*jsonrpc.Request)
	if !ok || !taskMethods[req.Method] || !req.IsCall() {
		return false
	}
	var p taskParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		e.reject(w, r, http.StatusBadRequest, jsonrpc.CodeInvalidParams, "invalid params: "+err.Error(), nil)
		return true
	}
	if _, ok := p.Meta[mcp.MetaKeyProtocolVersion]; !ok {
		e.reject(w, r, http.StatusBadRequest, jsonrpc.CodeInvalidParams, "_meta must carry "+mcp.MetaKeyProtocolVersion+" and "+mcp.MetaKeyClientCapabilities, nil)
		return true
	}
	// SEP-2243, and the extension's routing headers: Mcp-Method is the
	// method, Mcp-Name the task id, so that a load balancer may route on
	// them.
	if got := strings.TrimSpace(r.Header.Get("Mcp-Method")); got != req.Method {
		e.reject(w, r, http.StatusBadRequest, mcp.CodeHeaderMismatch, fmt.Sprintf("the Mcp-Method header (%q) must be the request's method, %q", got, req.Method), nil)
		return true
	}
	if p.TaskID == nil {
		e.reject(w, r, http.StatusBadRequest, jsonrpc.CodeInvalidParams, req.Method+" needs params.taskId", nil)
		return true
	}
	if got := strings.TrimSpace(r.Header.Get("Mcp-Name")); got != *p.TaskID {
		e.reject(w, r, http.StatusBadRequest, mcp.CodeHeaderMismatch, "the Mcp-Name header must be the request's params.taskId", nil)
		return true
	}
	result, rpcErr := taskRequest(r.Context(), e.tasks, ownerOf(oauth.CallerFrom(r.Context())), req.Method, p)
	switch {
	case rpcErr == nil:
		e.respond(w, req.ID, result)
	case rpcErr.Code == mcp.CodeMissingRequiredClientCapabilities:
		e.reject(w, r, http.StatusBadRequest, int(rpcErr.Code), rpcErr.Message, rpcErr.Data)
	default:
		e.reject(w, r, http.StatusOK, int(rpcErr.Code), rpcErr.Message, rpcErr.Data)
	}
	return true
}

// declaresTasksIn reports whether a 2026-07-28 request's _meta declares
// the extension in its clientCapabilities.
func declaresTasksIn(meta map[string]json.RawMessage) bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	json.Unmarshal(meta[mcp.MetaKeyClientCapabilities], &caps)
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// taskRequest answers a tasks/get, tasks/update or tasks/cancel of owner
// whose params carry a taskId, over any transport: its result, or the
// JSON-RPC error.
func taskRequest(ctx context.Context, m *tasks.Manager, owner, method string, p taskParams) (any, *jsonrpc.Error) {
	if !declaresTasksIn(p.Meta) {
		return nil, missingTasks(method)
	}
	id := *p.TaskID
	var result any
	var err error
	switch method {
	case "tasks/get":
		var t *taskstore.Task
		if t, err = m.Get(ctx, owner, id); err == nil {
			result, err = detailOf(t)
		}
	case "tasks/update":
		err = m.Update(ctx, owner, id, answerFrom(p.InputResponses))
		result = ack
	case "tasks/cancel":
		err = m.Cancel(ctx, owner, id)
		result = ack
	}
	switch {
	case errors.Is(err, taskstore.ErrNotFound):
		// The same answer for a task of another caller, an expired one
		// and one that never was.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task store failed: " + err.Error()}
	}
	return result, nil
}

// ack is the empty result of tasks/update and tasks/cancel.
var ack = struct {
	ResultType string `json:"resultType"`
}{"complete"}

// answerFrom turns tasks/update's inputResponses into the Manager's
// Answer: a response answers the question of its key when it is of the
// question's kind and fits its form, as an answer over MRTR must.
func answerFrom(responses map[string]json.RawMessage) tasks.Answer {
	return func(q plugins.InputRequest) (plugins.Answer, bool) {
		raw, ok := responses[q.ID]
		if !ok {
			return plugins.Answer{}, false
		}
		one := mcp.InputResponseMap{}
		if json.Unmarshal([]byte(`{"r":`+string(raw)+`}`), &one) != nil {
			return plugins.Answer{}, false
		}
		ir, err := toInputRequest(q)
		if err != nil {
			return plugins.Answer{}, false
		}
		b, ok := answerTo(q.Method, formSchema(ir), one["r"])
		if !ok {
			return plugins.Answer{}, false
		}
		return plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: b}, true
	}
}

// respond writes a JSON-RPC result.
func (e *mcpEndpoint) respond(w http.ResponseWriter, id jsonrpc.ID, result any) {
	res, err := json.Marshal(result)
	if err != nil {
		res, _ = json.Marshal(map[string]any{"resultType": "complete"})
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id.Raw(), res})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// listExecution adds to a tools/list result each task tool's execution
// (catalog.MCPExecution), which go-sdk's Tool cannot carry, so that the
// live list stays the bytes of `toolc export --format mcp`. A list
// without task tools passes as go-sdk made it. Waits for go-sdk: Tool's
// execution.
func (s *mcpTools) listExecution(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || method != "tools/list" {
			return res, err
		}
		snap := s.rt.Snapshot()
		task := map[int]string{}
		for i, t := range list.Tools {
			if info, ok := snap.ByMCPName(t.Name); ok && info.Tool.Task != "" {
				task[i] = info.Tool.Task
			}
		}
		if len(task) == 0 {
			return res, nil
		}
		b, err := marshalNoEscape(list)
		if err != nil {
			return res, nil
		}
		var fields map[string]json.RawMessage
		var tools []map[string]json.RawMessage
		if json.Unmarshal(b, &fields) != nil || json.Unmarshal(fields["tools"], &tools) != nil || len(tools) != len(list.Tools) {
			return res, nil
		}
		for i, t := range task {
			tools[i]["execution"], _ = json.Marshal(catalog.MCPExecution{TaskSupport: t})
		}
		if fields["tools"], err = marshalNoEscape(tools); err != nil {
			return res, nil
		}
		if v, ok := req.(interface{ ProtocolVersion() string }); ok && v.ProtocolVersion() >= modernRevision {
			// go-sdk sets resultType on its own results only.
			fields["resultType"] = json.RawMessage(`"complete"`)
		}
		out := &rawResult{fields: fields}
		out.Meta = list.Meta
		return out, nil
	}
}

// marshalNoEscape encodes v as go-sdk does, without HTML escapes.
func marshalNoEscape(v any) (json.RawMessage, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n")), nil
}

// rawResult is a result already encoded, but for the _meta that go-sdk
// may set after the middleware (the serverInfo of 2026-07-28).
type rawResult struct {
	mcp.ResultBase
	fields map[string]json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) {
	if len(r.Meta) > 0 {
		b, err := marshalNoEscape(r.Meta)
		if err != nil {
			return nil, err
		}
		r.fields["_meta"] = b
	}
	return marshalNoEscape(r.fields)
}
