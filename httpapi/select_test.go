package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/runtime"
)

// TestToolsSelectionBounded: GET /v1/tools?tools= costs little whatever
// it names. Forty thousand unknown names cost seconds of CPU (each was
// compared with every tool, for suggestions) and a 5 MB answer, with no
// token on loopback: now more than httpapi.MaxSelectTools names are a
// 400, the suggestions are for the first few unknown names, and a name
// longer than any tool's is quoted cut and gets none.
func TestToolsSelectionBounded(t *testing.T) {
	h := envelopeHandler(t, runtime.Options{})
	get := func(query string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/v1/tools?"+query, nil)
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	names := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "no_such_tool_%06d", i)
		}
		return b.String()
	}

	w := get("tools="+names(40000), nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), fmt.Sprintf("more than the %d it may", httpapi.MaxSelectTools)) || w.Body.Len() > 1024 {
		t.Errorf("40000 names: %d, %d bytes: %.300s", w.Code, w.Body.Len(), w.Body)
	}
	w = get("tools="+names(httpapi.MaxSelectTools), nil)
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), fmt.Sprintf("and %d more unknown tools", httpapi.MaxSelectTools-5)) || w.Body.Len() > 2048 {
		t.Errorf("%d unknown names: %d, %d bytes: %.300s", httpapi.MaxSelectTools, w.Code, w.Body.Len(), w.Body)
	}
	w = get("tools=ping,"+strings.Repeat("x", 500_000), nil)
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `(500000 bytes) (closest: none; no tool's name is that long)`) || w.Body.Len() > 2048 {
		t.Errorf("a name of 500,000 bytes: %d, %d bytes: %.300s", w.Code, w.Body.Len(), w.Body)
	}
	w = get("tools=pnig", nil)
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `unknown tool \"pnig\" (closest: \"ping\"`) {
		t.Errorf("a typo: %d %s", w.Code, w.Body)
	}
	if w = get("tools=ping", nil); w.Code != http.StatusOK {
		t.Errorf("a known name: %d %s", w.Code, w.Body)
	}
}

// TestCrossSiteGetRefused: a GET that a page of another site makes
// without CORS (an <img>, a <script>) carries no Origin header, only
// Sec-Fetch-Site, and is refused like one with a foreign Origin: a web
// page must not make a local server work. The user's own navigation
// ("none") and the server's own pages ("same-origin") pass, as do
// programs, which send neither header.
func TestCrossSiteGetRefused(t *testing.T) {
	rt := runtimetest.NewRuntime(t, runtime.Options{}, runtimetest.StartFaulty(t))
	ts := runtimetest.ServeHTTP(t, rt, httpapi.Options{})
	for _, path := range []string{"/v1/tools?tools=echo", "/metrics", "/healthz"} {
		for _, site := range []string{"cross-site", "same-site"} {
			r := runtimetest.Do(t, "GET", ts.URL+path, "", map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors"})
			runtimetest.WantStatus(t, r, http.StatusForbidden, "Sec-Fetch-Site: "+site)
		}
		for _, site := range []string{"", "none", "same-origin"} {
			if r := runtimetest.Do(t, "GET", ts.URL+path, "", map[string]string{"Sec-Fetch-Site": site}); r.Status != http.StatusOK {
				t.Errorf("GET %s with Sec-Fetch-Site %q: %d %s", path, site, r.Status, r.Body)
			}
		}
	}
}
