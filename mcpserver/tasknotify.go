package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/tasks"
	"github.com/toolc/toolc/taskstore"
)

// Task status notifications (the Tasks extension's notifications/tasks):
// a client of 2026-07-28 that names tasks in a subscriptions/listen
// (params.notifications.taskIds) gets, on that stream, each of its tasks
// as tasks/get would answer it, once when the stream opens and again each
// time its status or status message changes, until it ends.
//
// go-sdk serves subscriptions/listen and knows no taskIds: it acknowledges
// the other kinds of notification it was asked for and ignores the ids.
// toolc keeps go-sdk's stream and adds to it (listenWriter over HTTP,
// the stdio filter over stdio): the acknowledgement gains the task ids
// agreed to (the caller's own, and of those only the ones that exist),
// the tasks' notifications are written between go-sdk's messages, and
// the listen's result, which go-sdk writes at once when the listen asked
// for nothing else, is held back until every task named has ended. Waits
// for go-sdk: taskIds in NotificationSubscriptions, and a way to send a
// notification of a method it does not define.

// notificationTasks is the extension's status notification.
const notificationTasks = "notifications/tasks"

// maxListenTasks bounds the tasks one subscriptions/listen may name: each
// is read from the store on every change and every poll.
const maxListenTasks = 100

// listenParams are what toolc reads of a subscriptions/listen request.
type listenParams struct {
	Meta          map[string]json.RawMessage `json:"_meta"`
	Notifications *struct {
		TaskIDs []string `json:"taskIds"`
	} `json:"notifications"`
}

// taskIDsOf returns the task ids a subscriptions/listen request names, or
// nil when it is no such request or names none.
func taskIDsOf(req *jsonrpc.Request) (ids []string, meta map[string]json.RawMessage) {
	if req == nil || req.Method != "subscriptions/listen" || !req.IsCall() {
		return nil, nil
	}
	var p listenParams
	if json.Unmarshal(req.Params, &p) != nil || p.Notifications == nil {
		return nil, nil
	}
	return p.Notifications.TaskIDs, p.Meta
}

// checkListen says what is wrong with a listen for ids, or nil.
func checkListen(ids []string, meta map[string]json.RawMessage) *jsonrpc.Error {
	if !declaresTasksIn(meta) {
		return missingTasks("notifications.taskIds of subscriptions/listen")
	}
	if len(ids) > maxListenTasks {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("subscriptions/listen names %d tasks; a listen may name at most %d", len(ids), maxListenTasks)}
	}
	return nil
}

// agreeTasks returns those of ids that are tasks of owner, each once: the
// ones a listen is acknowledged for. Another caller's task is left out as
// one that does not exist is.
func agreeTasks(ctx context.Context, m *tasks.Manager, owner string, ids []string) []string {
	agreed := []string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := m.Get(ctx, owner, id); err == nil {
			agreed = append(agreed, id)
		}
	}
	return agreed
}

// withTaskIDs returns the acknowledgement msg with taskIds set to ids in
// its params.notifications, or msg as it is if it is not one.
func withTaskIDs(msg []byte, ids []string) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || string(m["method"]) != `"notifications/subscriptions/acknowledged"` {
		return msg, false
	}
	var params map[string]json.RawMessage
	var notes map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil {
		return msg, false
	}
	if json.Unmarshal(params["notifications"], &notes) != nil || notes == nil {
		notes = map[string]json.RawMessage{}
	}
	notes["taskIds"], _ = json.Marshal(ids)
	params["notifications"], _ = json.Marshal(notes)
	m["params"], _ = json.Marshal(params)
	out, err := json.Marshal(m)
	if err != nil {
		return msg, false
	}
	return out, true
}

// isResponseTo reports whether msg is the response to the request with
// the id (its JSON).
func isResponseTo(msg []byte, id json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return false
	}
	var a, b bytes.Buffer
	return json.Compact(&a, m.ID) == nil && json.Compact(&b, id) == nil && bytes.Equal(a.Bytes(), b.Bytes())
}

// taskFollower sends the notifications of one listen's tasks.
type taskFollower struct {
	m      *tasks.Manager
	owner  string
	listen json.RawMessage // the listen request's id, for _meta
	ids    []string
	// send writes one notification on the listen's stream.
	send func(msg []byte) error
}

// run sends each task's state at once and after each change, until every
// task has ended (or expired) or ctx ends. It reads the tasks again on
// every change the store tells of, and at the tasks' poll interval, when
// a Get is what notices that the replica running a task died.
func (f *taskFollower) run(ctx context.Context) {
	want := map[string]bool{}
	for _, id := range f.ids {
		want[id] = true
	}
	wake := make(chan struct{}, 1)
	stop := f.m.Subscribe(func(id string) {
		if want[id] { // read only: want is not changed after this point
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	defer stop()
	left := map[string]bool{}
	for id := range want {
		left[id] = true
	}
	last := map[string]string{}
	tick := time.NewTicker(f.m.Options().PollInterval)
	defer tick.Stop()
	for len(left) > 0 {
		for _, id := range f.ids {
			if !left[id] {
				continue
			}
			t, err := f.m.Get(ctx, f.owner, id)
			switch {
			case errors.Is(err, taskstore.ErrNotFound):
				delete(left, id) // expired: nothing more will be said of it
				continue
			case err != nil:
				continue // the store failed: try again at the next poll
			}
			if seen := string(t.Status) + "\x00" + t.StatusMessage; last[id] != seen {
				msg, err := f.notification(t)
				if err != nil || f.send(msg) != nil {
					return // the stream is gone
				}
				last[id] = seen
			}
			if t.Status.Terminal() {
				delete(left, id)
			}
		}
		if len(left) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// notification is notifications/tasks for t: the task as tasks/get
// answers it, with the listen's id in _meta.
func (f *taskFollower) notification(t *taskstore.Task) ([]byte, error) {
	d, err := detailOf(t)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(b, &params); err != nil {
		return nil, err
	}
	delete(params, "resultType") // of tasks/get's result, not of a notification
	params["_meta"], _ = json.Marshal(map[string]json.RawMessage{mcp.MetaKeySubscriptionID: f.listen})
	return json.Marshal(struct {
		JSONRPC string                     `json:"jsonrpc"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}{"2.0", notificationTasks, params})
}

// listenTasks serves a 2026-07-28 subscriptions/listen that names tasks,
// through go-sdk's handler with a listenWriter, and reports whether r
// was one.
func (e *mcpEndpoint) listenTasks(w http.ResponseWriter, r *http.Request) bool {
	if e.tasks == nil || r.Method != http.MethodPost {
		return false
	}
	req, _ := single(r).(*jsonrpc.Request)
	ids, meta := taskIDsOf(req)
	if len(ids) == 0 {
		return false
	}
	if err := checkListen(ids, meta); err != nil {
		status := http.StatusOK
		if err.Code == mcp.CodeMissingRequiredClientCapabilities {
			status = http.StatusBadRequest
		}
		e.reject(w, r, status, int(err.Code), err.Message, err.Data)
		return true
	}
	ctx := r.Context()
	owner := ownerOf(oauth.CallerFrom(ctx))
	lw := &listenWriter{ResponseWriter: w, id: idOf(r.Body.(*mcpBody).data), agreed: agreeTasks(ctx, e.tasks, owner, ids), acked: make(chan struct{})}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	followed := make(chan struct{})
	f := &taskFollower{m: e.tasks, owner: owner, listen: lw.id, ids: lw.agreed, send: lw.event}
	go func() {
		defer close(followed)
		select {
		case <-lw.acked: // the acknowledgement comes first on the stream
			f.run(fctx)
		case <-fctx.Done():
		}
	}()
	e.stateless.ServeHTTP(lw, r)
	held := lw.result()
	if held == nil {
		return true // go-sdk wrote its answer, or the client went away
	}
	select {
	case <-followed:
		lw.ResponseWriter.Write(held)
		http.NewResponseController(lw.ResponseWriter).Flush()
	case <-ctx.Done():
	}
	return true
}

// listenWriter is the writer go-sdk's handler answers a listen that
// names tasks with: it adds the agreed task ids to the acknowledgement,
// holds back the listen's result, and lets the task notifications in
// between go-sdk's events. go-sdk writes each SSE event in one Write.
type listenWriter struct {
	http.ResponseWriter
	id     json.RawMessage // the listen request's
	agreed []string

	mu    sync.Mutex
	acked chan struct{} // closed once the acknowledgement is written
	once  sync.Once
	held  []byte // the listen's result event, go-sdk's last
}

// sseData returns the data of an SSE event that one Write holds.
func sseData(p []byte) ([]byte, bool) {
	for _, line := range bytes.Split(p, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			return d, true
		}
	}
	return nil, false
}

func (w *listenWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if data, ok := sseData(p); ok {
		if isResponseTo(data, w.id) {
			w.held = bytes.Clone(p)
			return len(p), nil
		}
		if ack, ok := withTaskIDs(data, w.agreed); ok {
			n, err := w.ResponseWriter.Write(sseEvent(ack))
			w.once.Do(func() { close(w.acked) })
			if err != nil {
				return n, err
			}
			return len(p), nil
		}
	}
	return w.ResponseWriter.Write(p)
}

// event writes one of toolc's own messages as an SSE event.
func (w *listenWriter) event(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.ResponseWriter.Write(sseEvent(msg)); err != nil {
		return err
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *listenWriter) result() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held
}

func (w *listenWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *listenWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sseEvent frames a message as go-sdk frames its own.
func sseEvent(msg []byte) []byte {
	b := make([]byte, 0, len(msg)+len("event: message\ndata: \n\n"))
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	return append(b, "\n\n"...)
}
