package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/runtime"
)

// pagedSkills writes a contract that serves the named skills, in the
// order given, into dir.
func pagedSkills(t *testing.T, dir string, names ...string) {
	t.Helper()
	var decl strings.Builder
	for _, n := range names {
		fmt.Fprintf(&decl, "\tskills: %q: {}\n", n)
	}
	files := map[string]string{"notes/notes.cue": "package notes\n\nimport \"github.com/toolc/toolc/schema\"\n\nschema.#Service & {\n\tname: \"notes\"\n\tversion: \"1.0.0\"\n\tdescription: \"Notes\"\n\ttools: {}\n" + decl.String() + "}\n"}
	for _, n := range names {
		files["notes/skills/"+n+"/SKILL.md"] = "---\nname: " + n + "\ndescription: The skill " + n + "\n---\n"
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func swapSkills(t *testing.T, rt *runtime.Runtime, dir string) {
	t.Helper()
	res, err := compiler.Compile(compiler.Config{Dir: dir}, "./notes")
	if err != nil || res.HasErrors() {
		t.Fatalf("compile: %v %v", err, res.Diagnostics)
	}
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"notes": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
}

// TestSkillsPages: skills/list pages as the other lists do, by an opaque
// cursor, here two skills a page; a reload between two pages neither
// repeats nor skips a skill; and a cursor the server did not make is
// -32602, as the specification's pagination has it.
func TestSkillsPages(t *testing.T) {
	dir := t.TempDir()
	pagedSkills(t, dir, "echo", "alpha", "delta", "bravo", "charlie")
	rt := runtime.New(runtime.Options{})
	srv := New(rt, Options{ContentDir: dir})
	srv.ents.pageSize = 2
	swapSkills(t, rt, dir)
	ts := httptest.NewServer(NewHTTPHandler(rt, srv, HTTPOptions{}))
	t.Cleanup(ts.Close)

	page := func(cursor string) (names []string, next string) {
		t.Helper()
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		r := rpc2026(t, ts.URL, "skills/list", params)
		if r.Error != nil {
			t.Fatalf("skills/list %q: %+v", cursor, r.Error)
		}
		for _, s := range r.Result["skills"].([]any) {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(s.(map[string]any)["uri"].(string), "skill://"), "/SKILL.md"))
		}
		next, _ = r.Result["nextCursor"].(string)
		if _, has := r.Result["nextCursor"]; has && next == "" {
			t.Errorf("skills/list %q: an empty nextCursor; the last page has none", cursor)
		}
		return names, next
	}
	var pages [][]string
	cursor := ""
	for {
		names, next := page(cursor)
		pages = append(pages, names)
		if next == "" {
			break
		}
		if len(pages) > 5 {
			t.Fatalf("skills/list does not end: %q", pages)
		}
		cursor = next
	}
	if want := [][]string{{"alpha", "bravo"}, {"charlie", "delta"}, {"echo"}}; !slices.EqualFunc(pages, want, slices.Equal) {
		t.Errorf("pages %q, want %q", pages, want)
	}

	// A reload between pages: bravo, before the cursor, and delta, after
	// it, are gone, and beta is new before it; the next page continues
	// after bravo.
	first, cursor := page("")
	if !slices.Equal(first, []string{"alpha", "bravo"}) {
		t.Fatalf("first page %q", first)
	}
	if err := os.RemoveAll(filepath.Join(dir, "notes")); err != nil {
		t.Fatal(err)
	}
	pagedSkills(t, dir, "alpha", "beta", "charlie", "echo", "foxtrot")
	swapSkills(t, rt, dir)
	var rest []string
	for cursor != "" {
		var names []string
		names, cursor = page(cursor)
		rest = append(rest, names...)
	}
	if want := []string{"charlie", "echo", "foxtrot"}; !slices.Equal(rest, want) {
		t.Errorf("after a reload, the pages after bravo hold %q, want %q", rest, want)
	}

	// Cursors the server did not make.
	enc := base64.RawURLEncoding.EncodeToString
	for _, bad := range []string{
		"not a cursor!",
		enc([]byte("alpha")),
		enc([]byte("toolc skills/list after https://example.com/x")),
		strings.Repeat("A", 4096),
		"In8DAQEJcGFnZVRva2VuAf-AAAEBAQdMYXN0VUlEAQwAAAAb_4ABFnNraWxsOi8vYWxwaGEvU0tJTEwubWQA", // go-sdk's cursor form, after skill://alpha/SKILL.md
	} {
		r := rpc2026(t, ts.URL, "skills/list", map[string]any{"cursor": bad})
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r.Error.Message, "invalid cursor") {
			t.Errorf("skills/list with cursor %.40q = %v %+v, want -32602 invalid cursor", bad, r.Result, r.Error)
		}
	}

	// A 2025-11-25 session pages the same way.
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, "skills/list"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all []string
	p := &listSkillsParams{}
	for i := 0; i < 5; i++ {
		res, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, s, "skills/list", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Skills {
			all = append(all, e.URI)
		}
		if res.NextCursor == "" {
			break
		}
		p = &listSkillsParams{Cursor: res.NextCursor}
	}
	if want := []string{"skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://charlie/SKILL.md", "skill://echo/SKILL.md", "skill://foxtrot/SKILL.md"}; !slices.Equal(all, want) {
		t.Errorf("skills/list in a session, page by page: %q, want %q", all, want)
	}
	if _, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, s, "skills/list", &listSkillsParams{Cursor: "nope"}); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("skills/list in a session with a bad cursor: %v", err)
	}
}
