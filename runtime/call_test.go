package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

func TestCallAppliesDefaults(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))

	// The handler has no default of its own for times: it answers with a
	// tool error when times is missing, so a result proves the runtime
	// applied the contract's default before dispatch.
	res := runtimetest.Call(t, rt, "echo", `{"text":"hi"}`)
	runtimetest.WantOK(t, res)
	got := runtimetest.Structured(t, res)
	if got["echo"] != "hi" || got["times"] != 1.0 {
		t.Errorf("echo without times = %v, want echo hi, times 1", got)
	}
	// JSON results carry a text copy of the structured content.
	if len(res.Content) != 1 || res.Content[0].Type != "text" || !json.Valid([]byte(res.Content[0].Text)) {
		t.Errorf("content = %+v, want one text block of JSON", res.Content)
	}

	res = runtimetest.Call(t, rt, "echo", `{"text":"ab","times":3}`)
	runtimetest.WantOK(t, res)
	if got := runtimetest.Structured(t, res); got["echo"] != "ababab" || got["times"] != 3.0 {
		t.Errorf("echo times 3 = %v", got)
	}
}

func TestCallByMCPName(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	var mcpName string
	for _, info := range rt.Snapshot().Tools() {
		if info.Tool.Name == "echo" {
			mcpName = info.MCPName
		}
	}
	if mcpName == "" || mcpName == "echo" {
		t.Fatalf("MCP name of echo = %q", mcpName)
	}
	runtimetest.WantOK(t, runtimetest.Call(t, rt, mcpName, `{"text":"hi"}`))
}

// TestCallStringArguments: OpenAI's tool_calls carry the arguments as a
// JSON string holding the object.
func TestCallStringArguments(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	args, _ := json.Marshal(`{"text":"hi","times":2}`)
	res := runtimetest.Call(t, rt, "echo", string(args))
	runtimetest.WantOK(t, res)
	if got := runtimetest.Structured(t, res); got["echo"] != "hihi" {
		t.Errorf("echo with string arguments = %v", got)
	}

	// Surrounding white space, as a hand-written body may have.
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "echo", " \n"+string(args)+"\n"))

	// A string that holds something other than valid arguments is
	// checked like any other arguments.
	args, _ = json.Marshal(`{"text":`)
	runtimetest.WantToolError(t, runtimetest.Call(t, rt, "echo", string(args)), "not valid JSON")
	args, _ = json.Marshal(`{"text":""}`)
	runtimetest.WantToolError(t, runtimetest.Call(t, rt, "echo", string(args)), `"text"`)
	runtimetest.WantToolError(t, runtimetest.Call(t, rt, "echo", `"{\"text\": "hi"}"`), "malformed JSON string")
}

// TestInvalidArgumentsNeverReachTheHandler sends the record tool every
// kind of bad arguments. Each must be a tool error that says what is
// wrong, and the handler, which writes down every call it gets, must not
// have seen any of them.
func TestInvalidArgumentsNeverReachTheHandler(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	small := runtimetest.NewRuntime(t, runtime.Options{MaxArgumentBytes: 256}, p)

	type bad struct {
		name string
		rt   *runtime.Runtime
		// args is a format with one %s, the call's marker.
		args string
		want []string
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	cases := []bad{
		{"malformed JSON", rt, `{"note": "%s",`, []string{"invalid arguments for record: the arguments are not valid JSON"}},
		{"trailing garbage", rt, `{"note": "%s"} {}`, []string{"must be one JSON object, but more data follows it"}},
		{"not an object", rt, `["%s"]`, []string{"must be a JSON object, not an array"}},
		{"string for integer", rt, `{"note": "%s", "count": "2"}`, []string{`field "count" must be an integer, not the string "2"`}},
		{"fraction for integer", rt, `{"note": "%s", "count": 1.5}`, []string{`field "count" must be an integer, not the number 1.5`}},
		// Beyond the handler's int: its decoder would fail with Go's words.
		{"integer beyond int64", rt, `{"note": "%s", "count": 99999999999999999999999}`, []string{`field "count" must be an integer from -9223372036854775808 to 9223372036854775807 (64 bits), not 99999999999999999999999`}},
		{"integer beyond int64, spelled with an exponent", rt, `{"note": "%s", "count": 1e99999999999}`, []string{`field "count" must be an integer from -9223372036854775808`}},
		{"number for string", rt, `{"note": 7, "tags": ["%s"]}`, []string{`field "note" must be a string, not the number 7`}},
		{"string for boolean", rt, `{"note": "%s", "flag": "yes"}`, []string{`field "flag" must be a boolean`}},
		{"string for array", rt, `{"note": "%s", "tags": "a,b"}`, []string{`field "tags" must be an array of strings`}},
		{"null for required", rt, `{"note": null, "tags": ["%s"]}`, []string{`field "note" must be a string, not null`}},
		{"missing required", rt, `{"tags": ["%s"]}`, []string{`missing required field "note" (a string)`}},
		{"unknown field", rt, `{"note": "%s", "colour": "red"}`, []string{`unknown field "colour"; the fields are "note", "count", "tags" and "flag"`}},
		{"misspelt field", rt, `{"note": "%s", "cuont": 1}`, []string{`unknown field "cuont"`, `did you mean "count"`}},
		{"duplicate field", rt, `{"note": "%s", "note": "again"}`, []string{`"note" is given more than once`}},
		{"over maximum", rt, `{"note": "%s", "count": 4}`, []string{`field "count" must be at most 3, not 4`}},
		{"under minimum", rt, `{"note": "%s", "count": -1}`, []string{`field "count" must be at least 0, not -1`}},
		{"too long", rt, `{"note": "%s` + strings.Repeat("y", 100) + `"}`, []string{`field "note" must be at most 100 characters long`}},
		{"too short", rt, `{"note": "", "tags": ["%s"]}`, []string{`field "note" must be at least 1 character long`}},
		{"too many items", rt, `{"note": "%s", "tags": ["a", "b", "c", "d"]}`, []string{`field "tags" must have at most 3 items, not 4`}},
		{"deeply nested", rt, `{"note": "%s", "extra": ` + deep + `}`, []string{"nested too deeply"}},
		{"deeply nested value", rt, `{"note": "%s", "tags": ` + deep + `}`, []string{"nested too deeply"}},
		{"oversized", small, `{"note": "%s", "tags": ["` + strings.Repeat("z", 300) + `"]}`, []string{"bytes, over the limit of 256; send less"}},
		{"oversized string arguments", small, `"{\"note\": \"%s\", \"tags\": [\"` + strings.Repeat("z", 300) + `\"]}"`, []string{"bytes, over the limit of 256; send less"}},
	}
	var sent []string
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			m := marker()
			sent = append(sent, m)
			res := runtimetest.Call(t, c.rt, "record", fmt.Sprintf(c.args, m))
			runtimetest.WantToolError(t, res, c.want...)
			if len(res.Content) != 1 || res.StructuredContent != nil {
				t.Errorf("tool error = %+v, want one text block", res)
			}
		})
	}

	// A valid call after them reaches the handler: the record file is
	// written, and holds none of the invalid calls.
	ok := marker()
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "record", fmt.Sprintf(`{"note": %q, "count": 3, "tags": ["a"], "flag": true}`, ok)))
	got := recorded(t)
	if !strings.Contains(got, `{"note":"`+ok+`","count":3,"tags":["a"],"flag":true}`) {
		t.Errorf("the valid call is not in the record file as sent:\n%s", got)
	}
	for _, m := range sent {
		if strings.Contains(got, m) {
			t.Errorf("an invalid call reached the handler:\n%s", got)
		}
	}
}

func TestUnknownTool(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	for _, name := range []string{"nope", "", "Echo", "faulty"} {
		res, err := rt.Call(context.Background(), name, json.RawMessage(`{}`))
		if !errors.Is(err, runtime.ErrUnknownTool) || res != nil {
			t.Errorf("Call(%q) = %v, %v; want ErrUnknownTool", name, res, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("error %q does not name the tool", err)
		}
	}
	runtimetest.EchoWorks(t, rt)
}

// TestEventsInOrder: progress and log events reach CallWithEvents in the
// order the handler sent them, all before the call returns, from a plugin
// and in-process alike.
func TestEventsInOrder(t *testing.T) {
	const steps = 6
	var want []string
	for i := 1; i <= steps; i++ {
		want = append(want, fmt.Sprintf("progress %d/%d step %d", i, steps, i), fmt.Sprintf("log info log %d", i))
	}
	describe := func(ev runtime.Event) string {
		switch {
		case ev.Progress != nil && ev.Log == nil:
			return fmt.Sprintf("progress %g/%g %s", ev.Progress.Progress, ev.Progress.Total, ev.Progress.Message)
		case ev.Log != nil && ev.Progress == nil:
			return fmt.Sprintf("log %s %s", ev.Log.Level, ev.Log.Message)
		}
		return fmt.Sprintf("malformed event %+v", ev)
	}

	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	var got []string
	res, err := rt.CallWithEvents(context.Background(), "progress", json.RawMessage(fmt.Sprintf(`{"steps":%d}`, steps)), func(ev runtime.Event) {
		got = append(got, describe(ev))
	})
	if err != nil {
		t.Fatal(err)
	}
	runtimetest.WantOK(t, res)
	if !slices.Equal(got, want) {
		t.Errorf("events from the plugin:\n got %q\nwant %q", got, want)
	}

	// Without a callback the events go nowhere, and the call still works.
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "progress", `{}`))

	// In-process: the same events through runtime.Local.
	local := runtime.New(runtime.Options{})
	cat, err := runtimetest.Setup(t).Catalog.Select("progress")
	if err != nil {
		t.Fatal(err)
	}
	progress := plugins.Handle("progress", func(ctx context.Context, req struct{ Steps int }) (*plugins.Result, error) {
		for i := 1; i <= req.Steps; i++ {
			plugins.Progress(ctx, float64(i), float64(req.Steps), fmt.Sprintf("step %d", i))
			plugins.Log(ctx, "info", fmt.Sprintf("log %d", i))
		}
		return plugins.Text("done"), nil
	})
	if _, err := local.Swap(cat, map[string]runtime.Dispatcher{"faulty": runtime.Local(progress)}); err != nil {
		t.Fatal(err)
	}
	got = nil
	res, err = local.CallWithEvents(context.Background(), "progress", json.RawMessage(fmt.Sprintf(`{"steps":%d}`, steps)), func(ev runtime.Event) {
		got = append(got, describe(ev))
	})
	if err != nil {
		t.Fatal(err)
	}
	runtimetest.WantOK(t, res)
	if !slices.Equal(got, want) {
		t.Errorf("events in-process:\n got %q\nwant %q", got, want)
	}
}

// TestSwapChecksHandlerCoverage: a catalog with a tool that the plugin has
// no handler for is refused, naming the tool, and the old snapshot keeps
// serving.
func TestSwapChecksHandlerCoverage(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	before := rt.Snapshot()
	dispatchers := map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(runtimetest.InprocHandlers()...)}

	cat := runtimetest.CloneCatalog(t, runtimetest.Setup(t).Catalog)
	svc := runtimetest.Service(cat, "faulty")
	extra := *svc.Tools[0]
	extra.Name, extra.MCPName = "vanish", ""
	svc.Tools = append(svc.Tools, &extra)
	cat.Seal()
	old, err := rt.Swap(cat, dispatchers)
	if err == nil || old != nil {
		t.Fatalf("Swap with a tool the plugin lacks = %v, %v; want an error", old, err)
	}
	for _, want := range []string{`service "faulty"`, "lacks tools vanish", "echo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Swap error %q does not say %q", err, want)
		}
	}

	// A service without any dispatcher.
	_, err = rt.Swap(runtimetest.Setup(t).Catalog, map[string]runtime.Dispatcher{"faulty": p})
	if err == nil || !strings.Contains(err.Error(), `service "inproc" has no handler`) {
		t.Errorf("Swap without the inproc dispatcher: %v", err)
	}
	// In-process handlers are held to the same rule.
	_, err = rt.Swap(runtimetest.Setup(t).Catalog, map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local()})
	if err == nil || !strings.Contains(err.Error(), "lacks tools add") {
		t.Errorf("Swap with an empty Local: %v", err)
	}

	if rt.Snapshot() != before {
		t.Error("a refused Swap replaced the snapshot")
	}
	runtimetest.EchoWorks(t, rt)
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "add", `{"a":1,"b":2}`))
	if _, err := rt.Call(context.Background(), "vanish", json.RawMessage(`{}`)); !errors.Is(err, runtime.ErrUnknownTool) {
		t.Errorf("vanish after a refused Swap: %v", err)
	}

	// A plugin may have more handlers than the catalog has tools.
	sub, err := runtimetest.Setup(t).Catalog.Select("echo", "add")
	if err != nil {
		t.Fatal(err)
	}
	old, err = rt.Swap(sub, dispatchers)
	if err != nil || old != before {
		t.Fatalf("Swap to a sub-catalog = %v, %v", old, err)
	}
	runtimetest.EchoWorks(t, rt)
	if _, err := rt.Call(context.Background(), "sleep", json.RawMessage(`{"ms":1}`)); !errors.Is(err, runtime.ErrUnknownTool) {
		t.Errorf("sleep after a Swap that removed it: %v", err)
	}
}

// TestSwapKeepsCallsInFlight: a call that started on one snapshot finishes
// on it, though a Swap removed its tool meanwhile.
func TestSwapKeepsCallsInFlight(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	entered, release := make(chan struct{}), make(chan struct{})
	blocking := plugins.Handle("add", func(_ context.Context, req struct{ A, B int }) (*plugins.Result, error) {
		close(entered)
		<-release
		return plugins.JSON(map[string]int{"sum": req.A + req.B})
	})
	rt := runtimetest.NewRuntime(t, runtime.Options{}, p)
	if _, err := rt.Swap(runtimetest.Setup(t).Catalog, map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(blocking, runtimetest.RouteHandler())}); err != nil {
		t.Fatal(err)
	}
	done := make(chan *runtime.Result, 1)
	go func() {
		res, err := rt.Call(context.Background(), "add", json.RawMessage(`{"a":2,"b":3}`))
		if err != nil {
			res = plugins.Errorf("%v", err)
		}
		done <- res
	}()
	<-entered
	sub, err := runtimetest.Setup(t).Catalog.Select("echo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Swap(sub, map[string]runtime.Dispatcher{"faulty": p}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Call(context.Background(), "add", json.RawMessage(`{"a":2,"b":3}`)); !errors.Is(err, runtime.ErrUnknownTool) {
		t.Errorf("add after the Swap that removed it: %v", err)
	}
	close(release)
	res := <-done
	runtimetest.WantOK(t, res)
	if got := runtimetest.Structured(t, res)["sum"]; got != 5.0 {
		t.Errorf("add = %v", got)
	}
}

// TestConcurrencyLimit: with one slot per service, a second call to the
// service waits for the first, gives up when its context ends first, and
// gets a tool error when the call's own timeout passes first; a call to
// another service runs meanwhile.
func TestConcurrencyLimit(t *testing.T) {
	p := runtimetest.StartFaulty(t)
	runtimetest.Setup(t)
	entered, release := make(chan struct{}, 10), make(chan struct{})
	blocking := plugins.Handle("add", func(_ context.Context, req struct{ A, B int }) (*plugins.Result, error) {
		entered <- struct{}{}
		<-release
		return plugins.JSON(map[string]int{"sum": req.A + req.B})
	})
	rt := runtime.New(runtime.Options{MaxConcurrentCalls: 1, CallTimeout: 2 * time.Second})
	if _, err := rt.Swap(runtimetest.Setup(t).Catalog, map[string]runtime.Dispatcher{"faulty": p, "inproc": runtime.Local(blocking, runtimetest.RouteHandler())}); err != nil {
		t.Fatal(err)
	}

	first := make(chan error, 1)
	go func() {
		// It outlasts its timeout (the handler ignores its context), and
		// then ends with a tool error.
		_, err := rt.Call(context.Background(), "add", json.RawMessage(`{"a":1,"b":2}`))
		first <- err
	}()
	<-entered // the first call holds the only slot of inproc

	// The other service has slots of its own.
	runtimetest.EchoWorks(t, rt)

	// A second call gives up when its context ends.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	res, err := rt.Call(ctx, "add", json.RawMessage(`{"a":1,"b":1}`))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("a call waiting for a slot past its deadline = %v, %v; want context.DeadlineExceeded", res, err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("the waiting call gave up after %s, before its deadline", took)
	}

	// One whose caller would wait longer waits no longer than the call's
	// own timeout, and is told why it did not run.
	start = time.Now()
	res = runtimetest.Call(t, rt, "add", `{"a":1,"b":1}`)
	runtimetest.WantToolError(t, res, `add was not run: service "inproc" has 1 calls in flight, its limit, and none finished within 2s`)
	if took := time.Since(start); took < 2*time.Second || took > 5*time.Second {
		t.Errorf("the call waited %s for a slot, want the timeout of 2s", took)
	}

	// Another waits for the slot, and runs once the first call is done.
	second := make(chan *runtime.Result, 1)
	go func() {
		res, err := rt.Call(context.Background(), "add", json.RawMessage(`{"a":2,"b":2}`))
		if err != nil {
			res = plugins.Errorf("%v", err)
		}
		second <- res
	}()
	select {
	case res := <-second:
		t.Fatalf("the second call ran while the first held the only slot: %s", runtimetest.Text(res))
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-second:
		runtimetest.WantOK(t, res)
	case <-time.After(10 * time.Second):
		t.Fatal("the second call did not run after the first finished")
	}
}

// fixedHandler answers every call with the same result.
type fixedHandler struct {
	tool string
	res  *plugins.Result
}

func (h fixedHandler) Tool() string { return h.tool }

func (h fixedHandler) Call(context.Context, json.RawMessage) (*plugins.Result, error) {
	return h.res, nil
}

// TestResultChecks holds in-process results, which cross no process
// boundary, to the contract: structured content must be JSON, and must fit
// the response fields when the tool declares them.
func TestResultChecks(t *testing.T) {
	runtimetest.Setup(t)
	cat, err := runtimetest.Setup(t).Catalog.Select("echo", "progress")
	if err != nil {
		t.Fatal(err)
	}
	serve := func(echo, progress *plugins.Result) *runtime.Runtime {
		t.Helper()
		rt := runtime.New(runtime.Options{})
		if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"faulty": runtime.Local(fixedHandler{"echo", echo}, fixedHandler{"progress", progress})}); err != nil {
			t.Fatal(err)
		}
		return rt
	}
	type result = plugins.Result
	ok := json.RawMessage(`{"echo": "x", "times": 1}`)

	rt := serve(&result{StructuredContent: ok}, &result{StructuredContent: ok})
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`))
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "progress", `{}`)) // no response fields: any object

	rt = serve(&result{StructuredContent: map[string]any{"echo": "x", "times": 1}}, &result{StructuredContent: map[string]any{"any": true}})
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`))
	runtimetest.WantOK(t, runtimetest.Call(t, rt, "progress", `{}`))

	for _, c := range []struct {
		res  *result
		echo string // the tool error of echo, which has response fields
		prog string // and of progress, which has none
	}{
		{&result{StructuredContent: json.RawMessage(`{"echo": "x",`)}, "breaks its contract", "structured content that is not JSON"},
		{&result{StructuredContent: json.RawMessage(`{"echo": "x", "times": 1} trailing`)}, "breaks its contract", "structured content that is not JSON"},
		{&result{StructuredContent: map[string]any{"f": func() {}}}, "structured content that is not JSON", "structured content that is not JSON"},
		{&result{StructuredContent: json.RawMessage(`{"echo": "x", "times": "1"}`)}, `breaks its contract: field "times" must be an integer`, ""},
		{&result{StructuredContent: json.RawMessage(`{"echo": "x"}`)}, `breaks its contract: missing required field "times"`, ""},
		{&result{StructuredContent: json.RawMessage(`{"echo": "x", "times": 1, "extra": 2}`)}, `breaks its contract: unknown field "extra"`, ""},
		{plugins.Text("no structured content"), "returned no structured content, but the contract declares response fields", ""},
	} {
		rt := serve(c.res, c.res)
		runtimetest.WantToolError(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`), c.echo)
		if c.prog == "" {
			runtimetest.WantOK(t, runtimetest.Call(t, rt, "progress", `{}`))
		} else {
			runtimetest.WantToolError(t, runtimetest.Call(t, rt, "progress", `{}`), c.prog)
		}
	}

	// A tool error is passed on as it is, without response fields.
	rt = serve(plugins.Errorf("no such city"), plugins.Errorf("no such city"))
	runtimetest.WantToolError(t, runtimetest.Call(t, rt, "echo", `{"text":"x"}`), "no such city")
}
