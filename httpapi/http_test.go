package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/runtime"
)

func TestHTTPTools(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	project := func(cat *catalog.Catalog, target catalog.Target, strict bool) any {
		t.Helper()
		data, err := cat.ProjectJSON(target, catalog.ProjectOptions{Strict: strict})
		if err != nil {
			t.Fatal(err)
		}
		var v any
		json.Unmarshal(data, &v)
		return v
	}
	get := func(query string) any {
		t.Helper()
		r := runtimetest.Do(t, "GET", ts.URL+"/v1/tools"+query, "", nil)
		runtimetest.WantStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		var v any
		if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	same := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", what, g, w)
		}
	}

	for _, target := range catalog.Targets() {
		same(string(target), get("?format="+string(target)), project(runtimetest.Setup(t).Catalog, target, false))
	}
	same("default format", get(""), project(runtimetest.Setup(t).Catalog, catalog.MCP, false))
	same("strict=1", get("?format=openai-chat&strict=1"), project(runtimetest.Setup(t).Catalog, catalog.OpenAIChat, true))
	same("strict=true", get("?format=openai-chat&strict=true"), project(runtimetest.Setup(t).Catalog, catalog.OpenAIChat, true))
	if g, w := get("?format=openai-chat&strict=1"), get("?format=openai-chat"); g == nil || string(runtimetest.Must(json.Marshal(g))) == string(runtimetest.Must(json.Marshal(w))) {
		t.Error("strict=1 changes nothing in the openai-chat projection")
	}
	sub, err := runtimetest.Setup(t).Catalog.Select("echo", "add")
	if err != nil {
		t.Fatal(err)
	}
	same("tools=echo,add", get("?format=openai-chat&tools=echo,add"), project(sub, catalog.OpenAIChat, false))
	if n := len(get("?format=openai-chat&tools=echo,add").([]any)); n != 2 {
		t.Errorf("tools=echo,add gave %d tools", n)
	}

	runtimetest.WantStatus(t, runtimetest.Do(t, "GET", ts.URL+"/v1/tools?format=bogus", "", nil), http.StatusBadRequest, "bogus")
	runtimetest.WantStatus(t, runtimetest.Do(t, "GET", ts.URL+"/v1/tools?tools=echo,nope", "", nil), http.StatusNotFound, "nope")
	if r := runtimetest.Do(t, "POST", ts.URL+"/v1/tools", "", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/tools: status %d", r.Status)
	}
}

func TestHTTPCall(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{MaxArgumentBytes: 1024}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	post := func(body string) runtimetest.HTTPResult {
		t.Helper()
		return runtimetest.Do(t, "POST", ts.URL+"/v1/call", body, nil)
	}

	// Arguments as an object, and as a string as in OpenAI's tool_calls.
	for _, body := range []string{
		`{"name": "echo", "arguments": {"text": "hi", "times": 2}}`,
		`{"name": "echo", "arguments": "{\"text\": \"hi\", \"times\": 2}"}`,
	} {
		res := runtimetest.DecodeCall(t, post(body))
		if res.IsError || res.StructuredContent["echo"] != "hihi" || len(res.Content) != 1 || res.Content[0].Type != "text" {
			t.Errorf("%s = %+v", body, res)
		}
	}
	// By MCP name; without arguments, for a tool that needs none.
	res := runtimetest.DecodeCall(t, post(`{"name": "`+runtimetest.MCPName(t, "echo")+`", "arguments": {"text": "hi"}}`))
	if res.IsError || res.StructuredContent["times"] != 1.0 {
		t.Errorf("echo by MCP name = %+v", res)
	}
	for _, body := range []string{`{"name": "progress"}`, `{"name": "progress", "arguments": null}`} {
		if res := runtimetest.DecodeCall(t, post(body)); res.IsError || res.Content[0].Text != "did 3 steps" {
			t.Errorf("%s = %+v", body, res)
		}
	}

	// Tool errors are results: 200 with isError.
	res = runtimetest.DecodeCall(t, post(`{"name": "echo", "arguments": {"text": "hi", "times": 6}}`))
	if !res.IsError || !strings.Contains(res.Content[0].Text, `field "times" must be at most 5, not 6`) || res.StructuredContent != nil {
		t.Errorf("invalid arguments = %+v", res)
	}
	res = runtimetest.DecodeCall(t, post(`{"name": "panic", "arguments": {}}`))
	if !res.IsError || !strings.Contains(res.Content[0].Text, "deliberate panic") {
		t.Errorf("panic = %+v", res)
	}

	// Requests that are not calls.
	runtimetest.WantStatus(t, post(`{"name": "echo", "arguments": {"text": "hi"}`), http.StatusBadRequest, `the body must be {\"name\"`)
	runtimetest.WantStatus(t, post(`not json`), http.StatusBadRequest)
	runtimetest.WantStatus(t, post(`{"name": "echo", "args": {}}`), http.StatusBadRequest, "args")
	runtimetest.WantStatus(t, post(`{"arguments": {}}`), http.StatusBadRequest, `missing required field \"name\"`)
	runtimetest.WantStatus(t, post(`{"name": "nope", "arguments": {}}`), http.StatusNotFound, `unknown tool \"nope\"`)
	res = runtimetest.DecodeCall(t, post(`{"name": "echo", "arguments": {"text": "`+strings.Repeat("x", 8192)+`"}}`))
	if !res.IsError || !strings.Contains(res.Content[0].Text, "over the limit of 1024") {
		t.Errorf("arguments over the limit = %+v", res)
	}
	runtimetest.WantStatus(t, post(`{"name": "echo", "arguments": {"text": "`+strings.Repeat("x", 6*1024+64<<10)+`"}}`), http.StatusRequestEntityTooLarge, "the arguments may be at most 1024 bytes")
	if r := runtimetest.Do(t, "GET", ts.URL+"/v1/call", "", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/call: status %d", r.Status)
	}
}

func TestHTTPHealthAndMetrics(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{Token: "secret"})

	// /healthz needs no token, as probes have none, but without it says
	// only that the server is up: which contracts it serves is the
	// token holder's to know.
	auth := map[string]string{"Authorization": "Bearer secret"}
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}} {
		r := runtimetest.Do(t, "GET", ts.URL+"/healthz", "", h)
		runtimetest.WantStatus(t, r, http.StatusOK)
		if r.Body != "{\"status\":\"ok\"}\n" {
			t.Errorf("/healthz without the token = %s", r.Body)
		}
	}
	r := runtimetest.Do(t, "GET", ts.URL+"/healthz", "", auth)
	runtimetest.WantStatus(t, r, http.StatusOK)
	var health struct {
		Status  string
		Tools   int
		Catalog string
	}
	if err := json.Unmarshal([]byte(r.Body), &health); err != nil {
		t.Fatal(err)
	}
	if health.Status != "ok" || health.Tools != len(runtimetest.Setup(t).Catalog.ToolNames()) || health.Catalog != runtimetest.Setup(t).Catalog.Fingerprint || health.Catalog == "" {
		t.Errorf("/healthz = %+v", health)
	}
	// /metrics names every tool and counts its calls: it takes the token.
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "secret"}} {
		r := runtimetest.Do(t, "GET", ts.URL+"/metrics", "", h)
		runtimetest.WantStatus(t, r, http.StatusUnauthorized, "bearer token")
		if strings.Contains(r.Body, "toolc_") || strings.Contains(r.Body, "go_") {
			t.Errorf("/metrics without the token shows metrics: %s", r.Body)
		}
	}

	for range 3 {
		runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "echo", "arguments": {"text": "hi"}}`, auth))
	}
	runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "echo", "arguments": {}}`, auth))
	runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "add", "arguments": {"a": 1, "b": 1}}`, auth))
	// An unknown tool is not counted: its name would be a label that
	// anyone could make up.
	runtimetest.Do(t, "POST", ts.URL+"/v1/call", `{"name": "made_up", "arguments": {}}`, auth)

	r = runtimetest.Do(t, "GET", ts.URL+"/metrics", "", auth)
	runtimetest.WantStatus(t, r, http.StatusOK)
	metric := func(pattern string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + pattern + ` (\S+)$`).FindStringSubmatch(r.Body)
		if m == nil {
			t.Errorf("/metrics has no %s", pattern)
			return 0
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	if v := metric(`toolc_calls_total\{outcome="ok",tool="echo"\}`); v != 3 {
		t.Errorf("toolc_calls_total for echo, ok = %g, want 3", v)
	}
	if v := metric(`toolc_calls_total\{outcome="tool_error",tool="echo"\}`); v != 1 {
		t.Errorf("toolc_calls_total for echo, tool_error = %g, want 1", v)
	}
	if v := metric(`toolc_calls_total\{outcome="ok",tool="add"\}`); v != 1 {
		t.Errorf("toolc_calls_total for add = %g, want 1", v)
	}
	if v := metric(`toolc_call_errors_total\{kind="invalid_arguments",tool="echo"\}`); v != 1 {
		t.Errorf("invalid_arguments errors for echo = %g, want 1", v)
	}
	if v := metric(`toolc_call_duration_seconds_count\{tool="echo"\}`); v != 4 {
		t.Errorf("latency count for echo = %g, want 4", v)
	}
	if strings.Contains(r.Body, "made_up") {
		t.Error("/metrics has a label for an unknown tool")
	}
}

func TestHTTPOrigin(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{AllowedOrigins: []string{"http://localhost:6274"}})
	host := strings.TrimPrefix(ts.URL, "http://")
	callBody := `{"name": "echo", "arguments": {"text": "hi"}}`
	initBody := `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}`
	mcpHeader := func(origin string) map[string]string {
		h := map[string]string{"Accept": "application/json, text/event-stream"}
		if origin != "" {
			h["Origin"] = origin
		}
		return h
	}

	for _, origin := range []string{"http://evil.example", "http://" + host + ".evil.example", "http://localhost:1", "null"} {
		r := runtimetest.Do(t, "POST", ts.URL+"/v1/call", callBody, map[string]string{"Origin": origin})
		runtimetest.WantStatus(t, r, http.StatusForbidden, "origin", "may not call this server")
		r = runtimetest.Do(t, "POST", ts.URL+"/mcp", initBody, mcpHeader(origin))
		runtimetest.WantStatus(t, r, http.StatusForbidden)
		r = runtimetest.Do(t, "GET", ts.URL+"/v1/tools", "", map[string]string{"Origin": origin})
		runtimetest.WantStatus(t, r, http.StatusForbidden)
	}
	for _, origin := range []string{"", "http://" + host, "http://localhost:6274"} {
		res := runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", callBody, map[string]string{"Origin": origin}))
		if res.IsError {
			t.Errorf("origin %q: %+v", origin, res)
		}
		r := runtimetest.Do(t, "POST", ts.URL+"/mcp", initBody, mcpHeader(origin))
		if r.Status != http.StatusOK || !strings.Contains(r.Body, `"serverInfo"`) {
			t.Errorf("initialize from origin %q = %d %s", origin, r.Status, r.Body)
		}
	}
}

// TestHTTPRebinding: a page that rebinds its own domain to 127.0.0.1
// reaches the loopback listener under its own Host, with a matching
// Origin. The server refuses such requests, /mcp and /v1/ alike, and lets
// loopback names through.
func TestHTTPRebinding(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	port := ts.URL[strings.LastIndexByte(ts.URL, ':')+1:]
	send := func(method, path, host, body string) runtimetest.HTTPResult {
		t.Helper()
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return runtimetest.HTTPResult{Status: resp.StatusCode, Header: resp.Header, Body: string(data)}
	}
	callBody := `{"name": "echo", "arguments": {"text": "hi"}}`
	for _, host := range []string{"evil.example:" + port, "evil.example", "10.0.0.1:" + port} {
		runtimetest.WantStatus(t, send("POST", "/v1/call", host, callBody), http.StatusForbidden, "DNS rebinding")
		runtimetest.WantStatus(t, send("GET", "/v1/tools", host, ""), http.StatusForbidden)
		if r := send("POST", "/mcp", host, `{}`); r.Status != http.StatusForbidden {
			t.Errorf("/mcp under Host %s: status %d", host, r.Status)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "LOCALHOST:" + port} {
		if res := runtimetest.DecodeCall(t, send("POST", "/v1/call", host, callBody)); res.IsError {
			t.Errorf("Host %s: %+v", host, res)
		}
	}
}

func TestHTTPToken(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{Token: "s3cret"})
	callBody := `{"name": "echo", "arguments": {"text": "hi"}}`

	for _, h := range []map[string]string{
		nil,
		{"Authorization": "Bearer wrong"},
		{"Authorization": "Bearer s3cret2"},
		{"Authorization": "Bearer s3cre"},
		{"Authorization": "bearer s3cret "},
		{"Authorization": "Basic s3cret"},
		{"Authorization": "s3cret"},
	} {
		for _, r := range []runtimetest.HTTPResult{
			runtimetest.Do(t, "POST", ts.URL+"/v1/call", callBody, h),
			runtimetest.Do(t, "GET", ts.URL+"/v1/tools", "", h),
			runtimetest.Do(t, "POST", ts.URL+"/mcp", `{}`, h),
		} {
			runtimetest.WantStatus(t, r, http.StatusUnauthorized, "bearer token")
			if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("WWW-Authenticate %q", got)
			}
		}
	}
	right := map[string]string{"Authorization": "Bearer s3cret"}
	if res := runtimetest.DecodeCall(t, runtimetest.Do(t, "POST", ts.URL+"/v1/call", callBody, right)); res.IsError {
		t.Errorf("with the token: %+v", res)
	}
	runtimetest.WantStatus(t, runtimetest.Do(t, "GET", ts.URL+"/v1/tools", "", right), http.StatusOK)

	// The go-sdk client, with the token and without.
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	ctx := context.Background()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: runtimetest.BearerTransport{Token: "s3cret"}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: runtimetest.MCPName(t, "echo"), Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Errorf("echo with the token = %v, %v", res, err)
	}
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil); err == nil {
		t.Error("the go-sdk client connected without the token")
	}
}
