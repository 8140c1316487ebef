package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// TestGate: with a gate, /healthz says "starting" until it opens, the
// function-call API waits for it, and after a failed load both say so
// (the reason only to a caller with the token); a later good load opens
// them (toolc dev, after a fix).
func TestGate(t *testing.T) {
	gate := mcpserver.NewGate()
	h := envelopeHandler(t, runtime.Options{}, httpapi.Options{Gate: gate, Token: "secret"})
	get := func(path, token string, ctx context.Context) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil).WithContext(ctx)
		req.Host = "127.0.0.1"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	bg := context.Background()
	if w := get("/healthz", "", bg); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"status":"starting"`) {
		t.Errorf("/healthz while loading: %d %s", w.Code, w.Body)
	}
	// /v1/tools waits for the load: here, until its request gives up.
	// start is taken before the deadline is set, so that the wait is
	// measured from no later than the deadline's own start.
	start := time.Now()
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if w := get("/v1/tools?format=mcp", "secret", ctx); time.Since(start) < 100*time.Millisecond || w.Body.Len() != 0 {
		t.Errorf("/v1/tools while loading answered after %v: %d %s", time.Since(start), w.Code, w.Body)
	}

	gate.Open(errors.New("no go command on PATH"))
	if w := get("/healthz", "", bg); w.Code != http.StatusServiceUnavailable || w.Body.String() != `{"status":"failed"}`+"\n" {
		t.Errorf("/healthz after a failed load, without the token: %d %q", w.Code, w.Body)
	}
	if w := get("/healthz", "secret", bg); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"error":"the server could not load its tools: no go command on PATH"`) {
		t.Errorf("/healthz after a failed load, with the token: %d %s", w.Code, w.Body)
	}
	if w := get("/v1/tools?format=mcp", "secret", bg); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "no go command on PATH") {
		t.Errorf("/v1/tools after a failed load: %d %s", w.Code, w.Body)
	}

	gate.Open(nil)
	if w := get("/healthz", "", bg); w.Code != http.StatusOK {
		t.Errorf("/healthz after a good load: %d %s", w.Code, w.Body)
	}
	if w := get("/v1/tools?format=mcp", "secret", bg); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "ping") {
		t.Errorf("/v1/tools after a good load: %d %s", w.Code, w.Body)
	}
}
