package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/jsondepth"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// The envelope tests serve testdata/envelope in-process: ping and other,
// which answer with their own names, so that a test sees which one ran,
// and measure, which says how long its text is.

func envelopeHandler(t testing.TB, opts runtime.Options, httpOpts ...httpapi.Options) http.Handler {
	t.Helper()
	cat, err := runtimetest.EnvelopeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	type none struct{}
	rt := runtime.New(opts)
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"envelope": runtime.Local(
		plugins.Handle("ping", func(context.Context, none) (*plugins.Result, error) { return plugins.Text("ping"), nil }),
		plugins.Handle("other", func(context.Context, none) (*plugins.Result, error) { return plugins.Text("other"), nil }),
		plugins.Handle("measure", func(_ context.Context, req struct{ Text string }) (*plugins.Result, error) {
			return plugins.JSON(map[string]int{"bytes": len(req.Text)})
		}),
	)}); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(rt, mcpserver.Options{Name: "toolc-test", Version: "0.0.1"})
	return httpapi.NewHandler(rt, srv, append(httpOpts, httpapi.Options{})[0])
}

// postCall sends body to /v1/call through h, in process.
func postCall(h http.Handler, body []byte) runtimetest.HTTPResult {
	req := httptest.NewRequest("POST", "/v1/call", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return runtimetest.HTTPResult{Status: w.Code, Header: w.Header(), Body: w.Body.String()}
}

// TestHTTPCallEnvelope: the envelope is read exactly. Keys are
// case-sensitive and compared after their escapes are decoded; a key given
// twice, an unknown key and anything after the object are refused, each a
// 400 that says what is wrong; and the tool that runs is the one that the
// body names, as any strict JSON reader would read it.
func TestHTTPCallEnvelope(t *testing.T) {
	h := envelopeHandler(t, runtime.Options{})
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepObj := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	tests := []struct {
		body   string
		status int
		says   []string // parts of the error, or for 200 the tool that ran
	}{
		// The attack of issue 11, and its variants.
		{`{"name":"ping","NAME":"other"}`, 400, []string{`unknown field \"NAME\"; did you mean \"name\"?`}},
		{`{"NAME":"other","name":"ping"}`, 400, []string{`unknown field \"NAME\"`}},
		{`{"Name":"other"}`, 400, []string{`unknown field \"Name\"`, `missing required field \"name\"`}},
		{`{"name":"other","name":"ping"}`, 400, []string{`field \"name\" is given more than once`}},
		{`{"name":"ping","na\u006de":"other"}`, 400, []string{`field \"name\" is given more than once`}},
		{`{"\u006e\u0061\u006d\u0065":"ping","name":"other"}`, 400, []string{`field \"name\" is given more than once`}},
		{`{"name":"ping","arguments":{},"arguments":{"x":1}}`, 400, []string{`field \"arguments\" is given more than once`}},
		{`{"name":"ping","Arguments":{"x":1}}`, 400, []string{`unknown field \"Arguments\"`}},
		// encoding/json folds ſ (U+017F) to s, and K (U+212A) to k.
		{`{"name":"ping","argumentſ":{"x":1}}`, 400, []string{`unknown field \"argumentſ\"`}},
		{`{"name":"ping","argument\u017f":{"x":1}}`, 400, []string{`unknown field \"argumentſ\"`}},
		{"{\"name\xff\":\"other\",\"name\":\"ping\"}", 400, []string{`unknown field`}},
		{`{"name":"ping","extra":1}`, 400, []string{`unknown field \"extra\"`}},
		{`{"name":"ping","args":{}}`, 400, []string{`unknown field \"args\"; the fields are \"name\" and \"arguments\"`}},
		// Escaped keys that are exactly the envelope's are its keys.
		{`{"nam\u0065":"other"}`, 200, []string{"other"}},
		{`{"name":"ping"}`, 200, []string{"ping"}},
		{` {"name":"ping", "arguments": null} ` + "\n", 200, []string{"ping"}},
		{`{"name":"ping","arguments":"{}"}`, 200, []string{"ping"}},
		// Not one object of the right shape.
		{`{"name":"ping"}{"name":"other"}`, 400, []string{`the body must be one JSON object, but more data follows it`}},
		{`{"name":"ping"} x`, 400, []string{`more data follows`}},
		{`[{"name":"other"}]`, 400, []string{`the body must be a JSON object, not an array`}},
		{`"name"`, 400, []string{`the body must be a JSON object`}},
		{``, 400, []string{`missing required field \"name\"`}},
		{`null`, 400, []string{`missing required field \"name\"`}},
		{`{"name":"ping"`, 400, []string{`the body is not valid JSON`}},
		{`{"name":5}`, 400, []string{`field \"name\" must be a string, not the number 5`}},
		{`{"name":null}`, 400, []string{`field \"name\" must be a string, not null`}},
		{`{"name":""}`, 400, []string{`field \"name\" must be at least 1 character long`}},
		{`{"name":"ping","arguments":` + deep + `}`, 400, []string{`nested too deeply`}},
		{`{"name":"ping","x":` + deepObj + `}`, 400, []string{`the body is nested too deeply`}},
		{`{"name":"ping","arguments":{"a":` + deepObj + `}}`, 400, []string{`nested too deeply`}},
		// Names that are no tool.
		{`{"name":"ping\u0000"}`, 404, []string{`unknown tool`}},
		{`{"name":"PING"}`, 404, []string{`unknown tool \"PING\"`}},
		{`{"name":"` + strings.Repeat("p", 257) + `"}`, 400, []string{`field \"name\" must be at most 256 characters long`}},
		{`{"name":"` + strings.Repeat("ü", 256) + `"}`, 404, []string{`unknown tool`}},
	}
	for _, tt := range tests {
		r := postCall(h, []byte(tt.body))
		if r.Status != tt.status {
			t.Errorf("%.80s: status %d, want %d: %.300s", tt.body, r.Status, tt.status, r.Body)
			continue
		}
		if tt.status == 200 {
			var res runtimetest.CallResponse
			if err := json.Unmarshal([]byte(r.Body), &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != tt.says[0] {
				t.Errorf("%.80s: ran %s, want %s", tt.body, r.Body, tt.says[0])
			}
			continue
		}
		if !strings.Contains(r.Body, `"error":`) {
			t.Errorf("%.80s: body %q is no error", tt.body, r.Body)
		}
		for _, s := range tt.says {
			if !strings.Contains(r.Body, s) {
				t.Errorf("%.80s: %.300s does not say %s", tt.body, r.Body, s)
			}
		}
	}
}

// TestHTTPCallArgumentLimit (issue 11, item 16): the limit on arguments
// applies to the arguments, not to the envelope, so arguments in the
// string form, whose escapes can make them several times as long, pass
// when they are within it.
func TestHTTPCallArgumentLimit(t *testing.T) {
	const limit = 1 << 20
	h := envelopeHandler(t, runtime.Options{})
	measured := func(body []byte) int {
		t.Helper()
		r := postCall(h, body)
		if r.Status != 200 {
			t.Fatalf("status %d: %.300s", r.Status, r.Body)
		}
		var res struct {
			StructuredContent struct{ Bytes int }
			IsError           bool
		}
		if err := json.Unmarshal([]byte(r.Body), &res); err != nil || res.IsError {
			t.Fatalf("%.300s", r.Body)
		}
		return res.StructuredContent.Bytes
	}
	// argsOf returns arguments of n bytes whose text is made of quotes,
	// the most escaped character of a JSON text in a JSON string: \" in
	// the arguments, \\\" in their string form.
	argsOf := func(n int) []byte {
		quotes := (n - len(`{"text":""}`)) / 2
		args := []byte(`{"text":"` + strings.Repeat(`\"`, quotes) + `"}`)
		for len(args) < n {
			args = append(args[:len(args)-2], 'x', '"', '}')
		}
		return args
	}
	stringForm := func(args []byte) []byte {
		s, _ := json.Marshal(string(args))
		return []byte(`{"name":"measure","arguments":` + string(s) + `}`)
	}
	objectForm := func(args []byte) []byte {
		return []byte(`{"name":"measure","arguments":` + string(args) + `}`)
	}

	args := argsOf(limit)
	if len(args) != limit {
		t.Fatalf("arguments of %d bytes", len(args))
	}
	want := (limit - len(`{"text":""}`)) / 2
	if body := stringForm(args); len(body) < 2*limit {
		t.Fatalf("the string form is only %d bytes", len(body))
	}
	if got := measured(stringForm(args)); got < want {
		t.Errorf("string form at the limit: text of %d bytes, want %d or more", got, want)
	}
	if got := measured(objectForm(args)); got < want {
		t.Errorf("object form at the limit: text of %d bytes, want %d or more", got, want)
	}
	// \u escapes of every byte, as an encoder that escapes HTML writes <.
	var esc bytes.Buffer
	esc.WriteString(`{"name":"measure","arguments":"`)
	for _, b := range argsOf(limit - 16) {
		esc.WriteString(`\u00`)
		esc.WriteByte("0123456789abcdef"[b>>4])
		esc.WriteByte("0123456789abcdef"[b&15])
	}
	esc.WriteString(`"}`)
	if got := measured(esc.Bytes()); got < want-16 {
		t.Errorf("all-\\u string form: text of %d bytes", got)
	}

	// Over the limit, the arguments are a tool error, which a model reads.
	over := argsOf(limit + 1)
	for _, body := range [][]byte{stringForm(over), objectForm(over)} {
		r := postCall(h, body)
		runtimetest.WantStatus(t, r, http.StatusOK, `"isError":true`, "the arguments are 1048577 bytes, over the limit of 1048576; send less")
	}
	huge := append(objectForm(argsOf(limit)), bytes.Repeat([]byte(" "), 6*limit)...)
	runtimetest.WantStatus(t, postCall(h, huge), http.StatusRequestEntityTooLarge, "request body over", "the arguments may be at most 1048576 bytes")

	// The same limit holds for calls that do not come through HTTP.
	cat, _ := runtimetest.EnvelopeCatalog()
	rt := runtime.New(runtime.Options{})
	rt.Swap(cat, map[string]runtime.Dispatcher{"envelope": runtime.Local(
		plugins.Handle("measure", func(_ context.Context, req struct{ Text string }) (*plugins.Result, error) {
			return plugins.JSON(map[string]int{"bytes": len(req.Text)})
		}),
		plugins.Handle("ping", func(context.Context, struct{}) (*plugins.Result, error) { return plugins.Text("ping"), nil }),
		plugins.Handle("other", func(context.Context, struct{}) (*plugins.Result, error) { return plugins.Text("other"), nil }),
	)})
	s, _ := json.Marshal(string(args))
	if res, err := rt.Call(context.Background(), "measure", s); err != nil || res.IsError {
		t.Errorf("rt.Call with the string form at the limit: %v, %+v", err, res)
	}
	s, _ = json.Marshal(string(over))
	if res, err := rt.Call(context.Background(), "measure", s); err != nil || !res.IsError {
		t.Errorf("rt.Call with the string form over the limit: %v, %+v", err, res)
	}
}

// FuzzHTTPCall holds the handler of POST /v1/call to a reference reading of
// the envelope with encoding/json's tokenizer, which decodes escapes and
// compares keys exactly: for any body, a body the reference refuses is a
// 400, and one it accepts runs the tool it names (arguments over the limit
// are its tool error), or is a 404 when there is none. Nothing is ever a 500, and
// nothing panics. `go test` runs the seeds; `go test -fuzz FuzzHTTPCall
// ./runtime` explores.
func FuzzHTTPCall(f *testing.F) {
	for _, s := range []string{
		`{"name":"ping"}`, `{"name":"other","arguments":{}}`, `{"name":"ping","NAME":"other"}`,
		`{"name":"ping","na\u006de":"other"}`, `{"nam\u0065":"other"}`, `{"name":"measure","arguments":"{\"text\":\"abc\"}"}`,
		`{"name":"measure","arguments":{"text":"` + strings.Repeat("x", 300) + `"}}`,
		`{"name":"measure","arguments":"{\"text\":\"` + strings.Repeat(`\\\"`, 100) + `\"}"}`,
		`{"arguments":[],"name":"ping"}`, `{"name":"ping"} `, `{"name":"ping"}{}`, `[]`, ``, `null`, `{"name":"\ud800"}`,
		"{\"name\":\"ping\",\"\xff\":1}", `{"name":"ping","arguments":[[[[[[[[[[1]]]]]]]]]]}`, `{"name":"ping","argumentſ":{}}`,
		`{"name":"ping","arguments":{"a":{"b":{"c":1}}}}`, `{"name":1e999}`, `{"name":"ping","arguments":-0.0e-0}`,
	} {
		f.Add([]byte(s))
	}
	const limit = 256
	h := envelopeHandler(f, runtime.Options{MaxArgumentBytes: limit})
	f.Fuzz(func(t *testing.T, body []byte) {
		r := postCall(h, body)
		name, args, verdict := refEnvelope(body)
		switch {
		case verdict != "":
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%q: status %d, but the reference refuses it (%s): %s", body, r.Status, verdict, r.Body)
			}
		case len(args) > limit && (name == "ping" || name == "other" || name == "measure"):
			if r.Status != http.StatusOK || !strings.Contains(r.Body, "over the limit of 256") {
				t.Fatalf("%q: status %d for arguments of %d bytes: %s", body, r.Status, len(args), r.Body)
			}
		case name != "ping" && name != "other" && name != "measure":
			if r.Status != http.StatusNotFound {
				t.Fatalf("%q: status %d for tool %q: %s", body, r.Status, name, r.Body)
			}
		default:
			if r.Status != http.StatusOK {
				t.Fatalf("%q: status %d, but the reference reads a call of %q: %s", body, r.Status, name, r.Body)
			}
			var res runtimetest.CallResponse
			if err := json.Unmarshal([]byte(r.Body), &res); err != nil {
				t.Fatal(err)
			}
			// A tool error (arguments that are no object, say) names the
			// tool too.
			if len(res.Content) != 1 || !res.IsError && name != "measure" && res.Content[0].Text != name ||
				res.IsError && !strings.Contains(res.Content[0].Text, " "+name+":") && !strings.HasPrefix(res.Content[0].Text, "the arguments are a malformed JSON string") {
				t.Fatalf("%q: the reference reads a call of %q, but this ran %s", body, name, r.Body)
			}
		}
		if r.Status >= 400 {
			var e struct{ Error string }
			if json.Unmarshal([]byte(r.Body), &e) != nil || e.Error == "" {
				t.Fatalf("%q: status %d without an error message: %s", body, r.Status, r.Body)
			}
		}
	})
}

// refEnvelope reads a body as the envelope is specified: one JSON object
// with the keys "name", a string of 1 to 256 characters, and optionally
// "arguments", any JSON value; each at most once, keys compared exactly
// after their escapes are decoded; nesting at most 64 levels, the
// envelope's own included. args are the arguments after the string form
// is unwrapped. verdict says why the body is refused, or is "".
func refEnvelope(body []byte) (name string, args []byte, verdict string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return "", nil, "not an object"
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, "bad key"
		}
		key := tok.(string)
		if seen[key] {
			return "", nil, "key " + key + " twice"
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", nil, "bad value"
		}
		if jsondepth.Of(raw) > 63 {
			return "", nil, "too deep"
		}
		switch key {
		case "name":
			if err := json.Unmarshal(raw, &name); err != nil || utf8.RuneCountInString(name) < 1 || utf8.RuneCountInString(name) > 256 {
				return "", nil, "name not a string of 1 to 256 characters"
			}
		case "arguments":
			args = raw
			var s string
			if json.Unmarshal(raw, &s) == nil {
				args = []byte(s)
			}
		default:
			return "", nil, "unknown key " + key
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", nil, "not closed"
	}
	if rest, _ := io.ReadAll(dec.Buffered()); len(bytes.TrimLeft(rest, " \t\r\n")) > 0 || len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		return "", nil, "trailing data"
	}
	if !seen["name"] {
		return "", nil, "no name"
	}
	return name, args, ""
}

// TestUnknownLongToolName: the name of an unknown tool is quoted in the
// error cut to 256 bytes, over MCP (where go-sdk would quote it whole) and
// in a Go call, so that a caller cannot have megabytes echoed back.
func TestUnknownLongToolName(t *testing.T) {
	ts := httptest.NewServer(envelopeHandler(t, runtime.Options{}))
	defer ts.Close()
	name := strings.Repeat("é", 3000) // 6000 bytes, cut between characters
	r := runtimetest.RPC(t, ts.URL, "tools/call", map[string]any{"_meta": runtimetest.Meta2026("2026-07-28"), "name": name, "arguments": map[string]any{}},
		map[string]string{"MCP-Protocol-Version": "2026-07-28"})
	if r.Error == nil {
		t.Fatalf("tools/call of a 6000-byte name: %+v, want an error", r.Result)
	}
	want := fmt.Sprintf("unknown tool %q... (6000 bytes)", strings.Repeat("é", 128))
	if r.Error.Message != want || r.Error.Code != -32602 {
		t.Errorf("error %d %q, want -32602 %q", r.Error.Code, r.Error.Message, want)
	}

	rt := runtime.New(runtime.Options{})
	if _, err := rt.Call(context.Background(), name, json.RawMessage(`{}`)); err == nil || err.Error() != want {
		t.Errorf("Call: %v, want %s", err, want)
	}
}
