package runtimetest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPResult is an HTTP answer, read whole.
type HTTPResult struct {
	Status int
	Header http.Header
	Body   string
}

// Do sends a request and reads the whole answer.
func Do(t testing.TB, method, url, body string, header map[string]string) HTTPResult {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return HTTPResult{Status: resp.StatusCode, Header: resp.Header, Body: string(data)}
}

// WantStatus fails unless r has the status, and, for an error status, a
// JSON error body that says each of want.
func WantStatus(t testing.TB, r HTTPResult, status int, want ...string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if status >= 400 {
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(r.Body), &e); err != nil || e.Error == "" {
			t.Errorf("error body %q is not {\"error\": ...}", r.Body)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("error Content-Type %q", ct)
		}
	}
	for _, w := range want {
		if !strings.Contains(r.Body, w) {
			t.Errorf("body %q does not say %q", r.Body, w)
		}
	}
}

// CallResponse is the body of a /v1/call answer, decoded.
type CallResponse struct {
	Content []struct {
		Type, Text string
	}
	StructuredContent map[string]any
	IsError           bool
}

// DecodeCall decodes a /v1/call answer, failing the test unless it is
// 200.
func DecodeCall(t testing.TB, r HTTPResult) CallResponse {
	t.Helper()
	WantStatus(t, r, http.StatusOK)
	var out CallResponse
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return out
}

// Must returns v, and panics on err: for values a test builds that
// cannot fail.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// BearerTransport adds a bearer token to every request.
type BearerTransport struct{ Token string }

func (b BearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(req)
}

// RPCAnswer is a JSON-RPC response as it arrives, in JSON or as the last
// data line of an SSE stream.
type RPCAnswer struct {
	Status int
	Header http.Header
	ID     json.RawMessage
	Result map[string]any
	Error  *struct {
		Code    int
		Message string
		Data    map[string]any
	}
}

// Meta2026 is the _meta every 2026-07-28 request carries.
func Meta2026(version string) map[string]any {
	return map[string]any{
		mcp.MetaKeyProtocolVersion:                   version,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

// RPC POSTs one JSON-RPC request to /mcp with the headers, and decodes the
// answer.
func RPC(t testing.TB, url, method string, params map[string]any, header map[string]string) RPCAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	h := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Method": method}
	if name, ok := params["name"].(string); ok {
		h["Mcp-Name"] = name
	}
	if uri, ok := params["uri"].(string); ok && method == "resources/read" {
		h["Mcp-Name"] = uri
	}
	for k, v := range header {
		h[k] = v
	}
	r := Do(t, "POST", url+"/mcp", string(body), h)
	out := RPCAnswer{Status: r.Status, Header: r.Header}
	data := r.Body
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		data = ""
		for _, line := range strings.Split(r.Body, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
	}
	if err := json.Unmarshal([]byte(data), &out); err != nil {
		t.Fatalf("%s %s: status %d, body %q: %v", method, header, r.Status, r.Body, err)
	}
	return out
}
