package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/runtime"
)

// docsContract is a service of prompts and resources only, with the files
// it serves.
var docsContract = map[string]string{
	"docs/docs.cue": `package docs

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "docs"
	version:     "1.0.0"
	description: "Documentation"
	tools: {}
	prompts: review: {
		description: "Review code"
		arguments: {
			language: {type: "string", description: "Language", enum: ["go", "golang", "python"]}
			code: {type: "string", description: "The code"}
			focus: {type: "string", description: "Focus", required: false, default: "bugs"}
		}
		messages: [
			{role: "user", text: "Review this {{language}} code for {{focus}}:\n{{code}}"},
			{role: "assistant", image: "logo.png"},
			{role: "user", resource: {uri: "docs://style/{{language}}", text: "Style of {{language}}"}},
		]
	}
	resources: readme: {uri: "docs://readme", description: "The readme", file: "README.md"}
	resources: logo: {uri: "docs://logo", description: "The logo", file: "logo.png"}
	resources: page: {
		uriTemplate: "docs://pages/{name}"
		description: "A page"
		mimeType:    "application/json"
		variables: name: {type: "string", description: "Page name", pattern: "^[a-z\"]+$", examples: ["intro", "install", "usage"]}
		text: "{\"page\":\"{{name}}\"}"
	}
}
`,
	"docs/README.md": "# Docs\n",
	"docs/logo.png":  "\x89PNG\r\n\x1a\nnot really",
}

// serveDocs compiles docsContract in a temporary directory and serves it;
// it returns the URL, the directory and the runtime.
func serveDocs(t *testing.T) (string, string, *runtime.Runtime, *catalog.Catalog) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range docsContract {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./docs")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	rt := runtime.New(runtime.Options{})
	srv := New(rt, Options{ContentDir: dir})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"docs": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)
	return ts.URL, dir, rt, res.Catalog
}

// jsonValue encodes v and decodes it again, as a client sees it.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameJSON holds got and want to one JSON value.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := jsonValue(t, got), jsonValue(t, want); !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestPromptsAndResources(t *testing.T) {
	url, _, _, cat := serveDocs(t)
	for _, rev := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s := connect(t, url, rev, nil)
			caps := s.InitializeResult().Capabilities
			if caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
				t.Errorf("capabilities %+v lack prompts, resources or completions", caps)
			}

			// The lists are the catalog's MCP projections.
			prompts, err := s.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "prompts/list", prompts.Prompts, cat.MCPPrompts())
			resources, err := s.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "resources/list", resources.Resources, cat.MCPResources())
			templates, err := s.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "resources/templates/list", templates.ResourceTemplates, cat.MCPResourceTemplates())

			// A template prompt: the arguments substituted, the default
			// applied, the image read from beside the contract.
			got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"language": "go", "code": "x := 1"}})
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "prompts/get", got.Messages, []any{
				map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Review this go code for bugs:\nx := 1"}},
				map[string]any{"role": "assistant", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": []byte(docsContract["docs/logo.png"])}},
				map[string]any{"role": "user", "content": map[string]any{"type": "resource", "resource": map[string]any{"uri": "docs://style/go", "text": "Style of go"}}},
			})

			for _, bad := range []struct {
				name string
				args map[string]string
				msg  string
			}{
				{"review", map[string]string{"language": "go"}, `"code"`},
				{"review", map[string]string{"language": "rust", "code": "x"}, `"rust"`},
				{"review", map[string]string{"language": "go", "code": "x", "tone": "rude"}, `"tone"`},
				{"nope", nil, "unknown prompt"},
			} {
				_, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: bad.name, Arguments: bad.args})
				if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), bad.msg) {
					t.Errorf("prompts/get %s %v = %v; want invalid params naming %s", bad.name, bad.args, err, bad.msg)
				}
			}

			// Resources: text, a blob, a template with its variable
			// escaped as JSON.
			for _, tt := range []struct {
				uri  string
				want map[string]any
			}{
				{"docs://readme", map[string]any{"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Docs\n"}},
				{"docs://logo", map[string]any{"uri": "docs://logo", "mimeType": "image/png", "blob": []byte(docsContract["docs/logo.png"])}},
				{`docs://pages/a%22b`, map[string]any{"uri": `docs://pages/a%22b`, "mimeType": "application/json", "text": `{"page":"a\"b"}`}},
			} {
				r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
				if err != nil {
					t.Errorf("resources/read %s: %v", tt.uri, err)
					continue
				}
				sameJSON(t, "resources/read "+tt.uri, r.Contents, []any{tt.want})
			}
			for _, bad := range []struct{ uri, msg string }{
				{"docs://pages/UPPER", "must match the regular expression"}, // the variable's pattern
				{"docs://pages/a/b", "Resource not found"},                  // outside the template
				{"docs://nothing", "Resource not found"},                    // no such resource
				{"docs://readme/../logo", "Resource not found"},             // no path games
			} {
				_, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad.uri})
				if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), bad.msg) {
					t.Errorf("resources/read %s = %v; want invalid params saying %q", bad.uri, err, bad.msg)
				}
			}

			// Completions: an argument's enum, a variable's examples, by
			// prefix.
			for _, tt := range []struct {
				ref  *mcp.CompleteReference
				arg  string
				val  string
				want []string
			}{
				{&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "language", "Go", []string{"go", "golang"}},
				{&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "code", "", []string{}},
				{&mcp.CompleteReference{Type: "ref/resource", URI: "docs://pages/{name}"}, "name", "in", []string{"intro", "install"}},
			} {
				c, err := s.Complete(ctx, &mcp.CompleteParams{Ref: tt.ref, Argument: mcp.CompleteParamsArgument{Name: tt.arg, Value: tt.val}})
				if err != nil {
					t.Errorf("complete %s %q: %v", tt.arg, tt.val, err)
					continue
				}
				if !reflect.DeepEqual(c.Completion.Values, tt.want) || c.Completion.Total != len(tt.want) {
					t.Errorf("complete %s %q = %+v, want %v", tt.arg, tt.val, c.Completion, tt.want)
				}
			}
			_, err = s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, Argument: mcp.CompleteParamsArgument{Name: "tone"}})
			if rpcCode(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("complete of an undeclared argument = %v, want invalid params", err)
			}
		})
	}
}

// TestResourceFileAtServeTime: the server holds a file to the rules that
// toolc check did, when it reads it: a file replaced by a symbolic link out
// of the contract's directory, or gone, is an error, never its content.
func TestResourceFileAtServeTime(t *testing.T) {
	url, dir, _, _ := serveDocs(t)
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "docs", "README.md")
	if err := os.Remove(readme); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, readme); err != nil {
		t.Fatal(err)
	}
	s := connect(t, url, "2025-11-25", nil)
	ctx := context.Background()
	r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://readme"})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("read through a symlink out = %+v, %v; want an error", r, err)
	}
	if err := os.Remove(filepath.Join(dir, "docs", "logo.png")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"language": "go", "code": "x"}}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("prompt with its image gone = %v; want an error", err)
	}
}

// TestPromptsFollowSwaps: a reload that drops a prompt and a resource
// tells the client, and serves neither after it.
func TestPromptsFollowSwaps(t *testing.T) {
	url, _, rt, cat := serveDocs(t)
	changed := make(chan string, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	next := *cat.Services[0]
	next.Prompts, next.Resources = nil, next.Resources[:1]
	if _, err := rt.Swap(&catalog.Catalog{Services: []*catalog.Service{&next}}, map[string]runtime.Dispatcher{"docs": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case k := <-changed:
			seen[k] = true
		case <-ctx.Done():
			t.Fatalf("list_changed seen: %v, want prompts and resources", seen)
		}
	}
	if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"}); err == nil {
		t.Error("prompts/get of a prompt the reload dropped succeeded")
	}
	if _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://logo"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/read of a resource the reload dropped = %v, want Resource not found", err)
	}
}

// TestHandledPromptsAndResources: a prompt without messages and a resource
// without content are served by their handlers, here in process, and what
// a handler returns is held to the contract.
func TestHandledPromptsAndResources(t *testing.T) {
	dir := t.TempDir()
	contract := `package notes

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "notes"
	version:     "1.0.0"
	description: "Notes"
	tools: {}
	prompts: summarize: {
		description: "Summarize a note"
		arguments: id: {type: "string", description: "The note"}
	}
	resources: note: {
		uriTemplate: "notes://{id}"
		description: "A note"
		mimeType:    "text/markdown"
		variables: id: {type: "string", description: "The note", pattern: "^[0-9]+$"}
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "notes.cue"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	type noteVars struct {
		ID string `json:"id"`
	}
	summarize := plugins.HandlePrompt("summarize", func(ctx context.Context, args noteVars) ([]plugins.PromptMessage, error) {
		return []plugins.PromptMessage{
			{Role: "user", Content: plugins.TextContent("Summarize note " + args.ID)},
			{Role: "assistant", Content: plugins.TextContent("Reading it.")},
		}, nil
	})
	note := plugins.HandleResource("note", func(ctx context.Context, req plugins.ResourceRequest[noteVars]) ([]plugins.ResourceContents, error) {
		switch req.Variables.ID {
		case "7":
			return []plugins.ResourceContents{{MIMEType: "application/pdf", Blob: []byte("%PDF")}}, nil
		case "8":
			return nil, errors.New("note 8 is locked")
		}
		return []plugins.ResourceContents{{Text: "# Note " + req.Variables.ID}}, nil
	})

	rt := runtime.New(runtime.Options{})
	// A handler that lacks the prompt's is refused, as one that lacks a
	// tool is.
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"notes": runtime.Local(note)}); err == nil || !strings.Contains(err.Error(), "prompt:summarize") {
		t.Fatalf("swap with no prompt handler = %v; want it refused, naming prompt:summarize", err)
	}
	srv := New(rt, Options{ContentDir: dir})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"notes": runtime.Local(summarize, note)}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		s := connect(t, ts.URL, rev, nil)
		ctx := context.Background()
		got, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize", Arguments: map[string]string{"id": "42"}})
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "prompts/get", got.Messages, []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Summarize note 42"}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Reading it."}},
		})
		if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("prompts/get without the required argument = %v; want invalid params before the handler runs", err)
		}
		r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://42"})
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "resources/read", r.Contents, []any{map[string]any{"uri": "notes://42", "mimeType": "text/markdown", "text": "# Note 42"}})
		for uri, msg := range map[string]string{
			"notes://7": "application/pdf, and the contract says text/markdown",
			"notes://8": "note 8 is locked",
			"notes://x": "must match the regular expression",
		} {
			if _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("resources/read %s = %v; want an error saying %q", uri, err, msg)
			}
		}
	}
}

// TestHandledReadsAreNotCached: a read that a handler answers carries
// ttlMs 0 where the server's lists carry an hour, so that a 2026-07-28
// client, which keeps a read for its ttlMs, reads again: the handler's
// data changes (an issue that a tool closed) with nothing to tell the
// client. A static resource keeps the lists' hour. Before, every read had
// the hour, and go-sdk's client showed the first read for an hour.
func TestHandledReadsAreNotCached(t *testing.T) {
	dir := t.TempDir()
	contract := `package counter

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "counter"
	version:     "1.0.0"
	description: "Counters"
	tools: {}
	resources: readme: {uri: "counter://readme", description: "What the counters count", text: "Reads."}
	resources: counter: {
		uriTemplate: "counter://{id}"
		description: "How often the counter was read"
		variables: id: {type: "string", description: "The counter", pattern: "^[0-9]+$"}
	}
}
`
	if err := os.WriteFile(filepath.Join(dir, "counter.cue"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, ".")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	var reads atomic.Int64
	counter := plugins.HandleResource("counter", func(context.Context, plugins.ResourceRequest[struct {
		ID string `json:"id"`
	}]) ([]plugins.ResourceContents, error) {
		return []plugins.ResourceContents{{Text: fmt.Sprintf("read %d", reads.Add(1))}}, nil
	})
	rt := runtime.New(runtime.Options{})
	srv := New(rt, Options{ContentDir: dir, ListTTL: time.Hour})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"counter": runtime.Local(counter)}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)
	s := connect(t, ts.URL, "2026-07-28", nil)
	ctx := context.Background()
	read := func(uri string) *mcp.ReadResourceResult {
		t.Helper()
		r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("resources/read %s = %+v, %v", uri, r, err)
		}
		return r
	}
	if r := read("counter://readme"); r.TTLMs != 3600000 || r.Contents[0].Text != "Reads." {
		t.Errorf("counter://readme: ttlMs %d, %q; want the lists' hour, 3600000", r.TTLMs, r.Contents[0].Text)
	}
	for want := 1; want <= 2; want++ {
		if r := read("counter://1"); r.TTLMs != 0 || r.Contents[0].Text != fmt.Sprintf("read %d", want) {
			t.Errorf("read %d of counter://1: ttlMs %d, %q; want 0 and %q", want, r.TTLMs, r.Contents[0].Text, fmt.Sprintf("read %d", want))
		}
	}
}

// TestPromptsOverStdio: the prompts and resources are served over stdio as
// over HTTP.
func TestPromptsOverStdio(t *testing.T) {
	_, dir, rt, cat := serveDocs(t)
	// A second server on the runtime, which the next swap fills.
	srv := New(rt, Options{ContentDir: dir})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"docs": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go srv.Run(ctx, NewStdioTransport(inR, outW))
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prompts, err := s.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "prompts/list over stdio", prompts.Prompts, cat.MCPPrompts())
	r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://readme"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "# Docs\n" {
		t.Errorf("resources/read over stdio = %+v, %v", r, err)
	}
	c, err := s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, Argument: mcp.CompleteParamsArgument{Name: "language", Value: "py"}})
	if err != nil || !reflect.DeepEqual(c.Completion.Values, []string{"python"}) {
		t.Errorf("completion/complete over stdio = %+v, %v", c, err)
	}
}
