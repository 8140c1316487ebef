package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
)

// generateArgs returns the directory and the toolc build patterns of the
// go:generate line in main.go, so that the test compiles exactly what go
// generate compiles.
func generateArgs(t *testing.T) (dir, out string, patterns []string) {
	t.Helper()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate go run -C ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		// DIR ./cmd/toolc build -o FILE PATTERN...
		if len(f) < 6 || f[1] != "./cmd/toolc" || f[2] != "build" || f[3] != "-o" {
			t.Fatalf("unexpected go:generate line %q", line)
		}
		return f[0], f[4], f[5:]
	}
	t.Fatal("main.go has no go:generate line")
	return "", "", nil
}

// TestEmbeddedCatalogIsCurrent compiles the contracts afresh and compares
// them with the embedded catalog: a contract changed since the last go
// generate fails the test, so a stale catalog never ships.
func TestEmbeddedCatalogIsCurrent(t *testing.T) {
	dir, out, patterns := generateArgs(t)
	if out != "examples/embed/"+catalogFile {
		t.Fatalf("go generate writes %s, not the embedded %s", out, catalogFile)
	}
	if !slices.Contains(patterns, "./examples/weather") {
		t.Errorf("go generate does not build ./examples/weather: %v", patterns)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if res.HasErrors() {
		t.Fatalf("the contracts have errors: %v", res.Diagnostics)
	}
	embedded, err := catalog.Load(catalogFS, catalogFile)
	if err != nil {
		t.Fatalf("stale embedded catalog: run go generate ./examples/embed (%v)", err)
	}
	if embedded.Fingerprint != res.Catalog.Fingerprint {
		var changed []string
		fresh := map[string]string{}
		for _, tool := range res.Catalog.Tools() {
			fresh[tool.Name] = tool.Fingerprint
		}
		for _, tool := range embedded.Tools() {
			if fresh[tool.Name] != tool.Fingerprint {
				changed = append(changed, tool.Name)
			}
			delete(fresh, tool.Name)
		}
		for name := range fresh {
			changed = append(changed, name)
		}
		slices.Sort(changed)
		t.Fatalf("stale embedded catalog: run go generate ./examples/embed (changed tools: %v)", changed)
	}
	if data, _ := res.Catalog.Marshal(); !bytes.Equal(data, mustRead(t, catalogFile)) {
		t.Logf("the contracts are unchanged, but declarations moved; go generate ./examples/embed updates their positions")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func loadEmbedded(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load(catalogFS, catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestToolsHandler(t *testing.T) {
	cat := loadEmbedded(t)
	srv := httptest.NewServer(newHandler(cat))
	defer srv.Close()

	get := func(t *testing.T, method, path string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}

	for _, target := range catalog.Targets() {
		for _, strict := range []string{"", "0", "1", "true"} {
			t.Run(string(target)+"/strict="+strict, func(t *testing.T) {
				code, h, body := get(t, "GET", "/tools?format="+string(target)+"&strict="+strict)
				if code != 200 {
					t.Fatalf("= %d %s", code, body)
				}
				want, _ := cat.ProjectJSON(target, catalog.ProjectOptions{Strict: strict == "1" || strict == "true"})
				if body != string(want) {
					t.Errorf("the body is not the projection")
				}
				if h.Get("Content-Type") != "application/json" || h.Get("Toolc-Catalog") != cat.Fingerprint {
					t.Errorf("headers %v", h)
				}
			})
		}
	}

	t.Run("tools", func(t *testing.T) {
		code, _, body := get(t, "GET", "/tools?format=anthropic&tools=query_weather,%20delete_comment")
		if code != 200 {
			t.Fatalf("= %d %s", code, body)
		}
		var tools []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(body), &tools); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != "delete_comment,query_weather" {
			t.Errorf("tools %v, want delete_comment and query_weather in catalog order", names)
		}
	})

	t.Run("strict changes the schema", func(t *testing.T) {
		_, _, loose := get(t, "GET", "/tools?format=openai-chat&tools=query_weather")
		_, _, strict := get(t, "GET", "/tools?format=openai-chat&tools=query_weather&strict=1")
		if !strings.Contains(strict, `"strict": true`) || !strings.Contains(loose, `"strict": false`) {
			t.Errorf("strict=1 does not make the tool strict:\n%s", strict)
		}
	})

	t.Run("HEAD", func(t *testing.T) {
		if code, _, _ := get(t, "HEAD", "/tools?format=mcp"); code != 200 {
			t.Errorf("HEAD = %d", code)
		}
	})

	bad := []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/tools", 400, "the format parameter is required: openai-chat, openai-responses, anthropic, gemini, bedrock, mcp"},
		{"GET", "/tools?format=openai", 400, `unknown format "openai"`},
		{"GET", "/tools?format=mcp&strict=maybe", 400, `strict="maybe": want 1 or 0`},
		{"GET", "/tools?format=mcp&tools=query_weather,nope", 400, `unknown tool "nope" (closest: `},
		{"GET", "/tools?format=mcp&tools=,", 400, `names no tool`},
		{"POST", "/tools?format=mcp", 405, ``},
		{"GET", "/", 404, ``},
	}
	for _, tt := range bad {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			code, _, body := get(t, tt.method, tt.path)
			if code != tt.code || !strings.Contains(body, tt.body) {
				t.Errorf("= %d %q, want %d %q", code, body, tt.code, tt.body)
			}
		})
	}
}
