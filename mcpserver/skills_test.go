package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/runtime"
)

var skillContract = map[string]string{
	"notes/notes.cue": `package notes

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "notes"
	version:     "1.0.0"
	description: "Notes"
	tools: {}
	skills: "pdf-processing": {}
}
`,
	"notes/skills/pdf-processing/SKILL.md":            "---\nname: pdf-processing\ndescription: Fill PDF forms\nmetadata: {version: \"2\"}\n---\n# PDF\n",
	"notes/skills/pdf-processing/references/FORMS.md": "# Forms\n",
	"notes/skills/pdf-processing/scripts/extract.bin": "\x00\x01binary",
	"notes/secret.md": "not the skill's",
}

func sha(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// serveSkills compiles skillContract in a temporary directory and serves
// it over HTTP.
func serveSkills(t *testing.T) (url, dir string) {
	t.Helper()
	dir = t.TempDir()
	for name, data := range skillContract {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./notes")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	rt := runtime.New(runtime.Options{})
	srv := New(rt, Options{ContentDir: dir})
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"notes": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)
	return ts.URL, dir
}

// TestSkills: the Skills extension (SEP-2640) over a 2026-07-28 request
// and a 2025-11-25 session: the capability, skills/list and skills/get
// with the frontmatter and each file's digest and size, which are those
// of the bytes resources/read then serves, resources/directory/read, and
// the errors of a URI the server does not serve.
func TestSkills(t *testing.T) {
	url, dir := serveSkills(t)
	files := map[string]string{}
	for name, data := range skillContract {
		if rest, ok := cutSkill(name); ok {
			files[rest] = data
		}
	}
	wantEntry := map[string]any{
		"uri":         "skill://pdf-processing/SKILL.md",
		"frontmatter": map[string]any{"name": "pdf-processing", "description": "Fill PDF forms", "metadata": map[string]any{"version": "2"}},
		"resources": []any{
			map[string]any{"uri": "skill://pdf-processing/SKILL.md", "digest": sha(files["SKILL.md"]), "size": float64(len(files["SKILL.md"]))},
			map[string]any{"uri": "skill://pdf-processing/references/FORMS.md", "digest": sha(files["references/FORMS.md"]), "size": float64(len(files["references/FORMS.md"]))},
			map[string]any{"uri": "skill://pdf-processing/scripts/extract.bin", "digest": sha(files["scripts/extract.bin"]), "size": float64(len(files["scripts/extract.bin"]))},
		},
	}
	params := func(kv ...any) map[string]any {
		p := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		return p
	}

	d := rpc2026(t, url, "server/discover", params())
	ext, _ := d.Result["capabilities"].(map[string]any)["extensions"].(map[string]any)
	if !reflect.DeepEqual(ext[skillsExtension], map[string]any{"directoryRead": true}) {
		t.Errorf("server/discover extensions = %v, want %s with directoryRead", ext, skillsExtension)
	}

	l := rpc2026(t, url, "skills/list", params())
	if l.Error != nil {
		t.Fatalf("skills/list: %+v", l.Error)
	}
	sameJSON(t, "skills/list", l.Result["skills"], []any{wantEntry})
	if l.Result["resultType"] != "complete" || l.Result["cacheScope"] != "public" || l.Result["ttlMs"] == nil {
		t.Errorf("skills/list result %v: want resultType, ttlMs and cacheScope", l.Result)
	}
	g := rpc2026(t, url, "skills/get", params("uri", "skill://pdf-processing/SKILL.md"))
	if g.Error != nil {
		t.Fatalf("skills/get: %+v", g.Error)
	}
	sameJSON(t, "skills/get", g.Result["skill"], wantEntry)

	// Every file the entry lists reads as the bytes it describes.
	for _, r := range wantEntry["resources"].([]any) {
		r := r.(map[string]any)
		rr := rpc2026(t, url, "resources/read", params("uri", r["uri"]))
		if rr.Error != nil {
			t.Errorf("resources/read %s: %+v", r["uri"], rr.Error)
			continue
		}
		c := rr.Result["contents"].([]any)[0].(map[string]any)
		data, _ := c["text"].(string)
		if b, ok := c["blob"].(string); ok {
			var raw []byte
			json.Unmarshal([]byte(`"`+b+`"`), &raw)
			data = string(raw)
		}
		if sha(data) != r["digest"] {
			t.Errorf("resources/read %s = %q, whose digest is not the entry's", r["uri"], data)
		}
	}

	dr := rpc2026(t, url, "resources/directory/read", params("uri", "skill://pdf-processing"))
	if dr.Error != nil {
		t.Fatalf("resources/directory/read: %+v", dr.Error)
	}
	var kids []string
	for _, r := range dr.Result["resources"].([]any) {
		r := r.(map[string]any)
		kids = append(kids, r["uri"].(string)+" "+r["mimeType"].(string))
	}
	if want := []string{"skill://pdf-processing/SKILL.md text/markdown", "skill://pdf-processing/references inode/directory", "skill://pdf-processing/scripts inode/directory"}; !slices.Equal(kids, want) {
		t.Errorf("resources/directory/read = %q, want %q", kids, want)
	}

	// What the server does not serve.
	for _, tc := range []struct{ method, uri string }{
		{"skills/get", "skill://other/SKILL.md"},
		{"skills/get", "skill://pdf-processing/references/FORMS.md"},
		{"resources/directory/read", "skill://pdf-processing/SKILL.md"},
		{"resources/directory/read", "skill://pdf-processing/nothing"},
		{"resources/directory/read", "skill://other"},
		{"resources/read", "skill://pdf-processing/../secret.md"},
		{"resources/read", "skill://pdf-processing/references/../../secret.md"},
		{"resources/read", "skill://pdf-processing/nothing.md"},
	} {
		r := rpc2026(t, url, tc.method, params("uri", tc.uri))
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s %s = %+v %+v, want -32602", tc.method, tc.uri, r.Result, r.Error)
		}
	}

	// A directory is one page: the server makes no cursor, so any cursor
	// is refused rather than read as none.
	for _, cursor := range []string{"junk", skillCursor("skill://pdf-processing/SKILL.md"), strings.Repeat("A", 1<<20)} {
		r := rpc2026(t, url, "resources/directory/read", params("uri", "skill://pdf-processing", "cursor", cursor))
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r.Error.Message, "invalid cursor") {
			t.Errorf("resources/directory/read with cursor %.40q = %.200v %+v, want -32602", cursor, r.Result, r.Error)
		}
	}

	// Files are read when served: an edit shows in the next entry.
	if err := os.WriteFile(filepath.Join(dir, "notes/skills/pdf-processing/references/FORMS.md"), []byte("# Forms, v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g = rpc2026(t, url, "skills/get", params("uri", "skill://pdf-processing/SKILL.md"))
	if got := g.Result["skill"].(map[string]any)["resources"].([]any)[1].(map[string]any)["digest"]; got != sha("# Forms, v2\n") {
		t.Errorf("after an edit, skills/get has digest %v", got)
	}

	// A 2025-11-25 session: the extension's methods, and SKILL.md among
	// the resources, named and described by its frontmatter.
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, "skills/list"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.InitializeResult().Capabilities.Extensions[skillsExtension]; !ok {
		t.Errorf("initialize capabilities %+v lack %s", s.InitializeResult().Capabilities, skillsExtension)
	}
	list, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, s, "skills/list", &listSkillsParams{})
	if err != nil || len(list.Skills) != 1 || list.Skills[0].URI != "skill://pdf-processing/SKILL.md" {
		t.Errorf("skills/list in a session = %+v, %v", list, err)
	}
	rl, err := s.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) != 1 || rl.Resources[0].Name != "pdf-processing" || rl.Resources[0].Description != "Fill PDF forms" || rl.Resources[0].MIMEType != "text/markdown" {
		t.Errorf("resources/list = %+v, %v; want SKILL.md named and described by its frontmatter", rl, err)
	}
}

// rpc2026 sends one 2026-07-28 request to url's /mcp.
func rpc2026(t *testing.T, url, method string, params map[string]any) answer {
	t.Helper()
	p := map[string]any{"_meta": json.RawMessage(meta2026)}
	for k, v := range params {
		p[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	name := ""
	if method == "resources/read" {
		name, _ = params["uri"].(string)
	}
	return postMCP(t, url, string(body), header2026(method, name))
}

func cutSkill(name string) (string, bool) {
	const prefix = "notes/skills/pdf-processing/"
	if len(name) > len(prefix) && name[:len(prefix)] == prefix {
		return name[len(prefix):], true
	}
	return "", false
}

// TestNoSkills: a server without skills declares no extension and
// answers its methods "method not found".
func TestNoSkills(t *testing.T) {
	url, _, _, _ := serveDocs(t)
	d := rpc2026(t, url, "server/discover", nil)
	if ext, _ := d.Result["capabilities"].(map[string]any)["extensions"].(map[string]any); ext[skillsExtension] != nil {
		t.Errorf("a server without skills declares %s", skillsExtension)
	}
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		r := rpc2026(t, url, m, map[string]any{"uri": "skill://x/SKILL.md"})
		if r.Error == nil || r.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s = %+v %+v, want -32601", m, r.Result, r.Error)
		}
	}
}
