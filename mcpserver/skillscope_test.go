package mcpserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/runtimetest"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/oauth"
	"github.com/toolc/toolc/runtime"
)

// TestSkillsFollowScopes: a skill is its service's, so an OAuth caller
// without the service's auth.scopes neither sees it nor reads it, through
// any of the extension's methods or resources/read, and is answered as
// for a skill that does not exist; a caller with them gets it all. Before,
// skills/list, skills/get, resources/directory/read and resources/read
// served every skill to any valid token.
func TestSkillsFollowScopes(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"notes/notes.cue": `package notes

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "notes"
	version:     "1.0.0"
	description: "Notes"
	auth: scopes: ["notes:use"]
	tools: {}
	skills: "pdf-processing": {}
}
`,
		"notes/skills/pdf-processing/SKILL.md":            "---\nname: pdf-processing\ndescription: Fill PDF forms\n---\n# PDF\n",
		"notes/skills/pdf-processing/references/FORMS.md": "# Forms\n",
	} {
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
	if _, err := rt.Swap(res.Catalog, map[string]runtime.Dispatcher{"notes": runtime.Local()}); err != nil {
		t.Fatal(err)
	}
	iss := runtimetest.NewIssuer(t)
	v, err := oauth.New(context.Background(), oauth.Config{Issuer: iss.URL, Resource: runtimetest.TestResource})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.NewHandler(rt, mcpserver.New(rt, mcpserver.Options{ContentDir: dir}), httpapi.Options{OAuth: v}))
	t.Cleanup(ts.Close)

	rpc := func(token, method string, params map[string]any) runtimetest.RPCAnswer {
		params["_meta"] = runtimetest.Meta2026("2026-07-28")
		return runtimetest.RPC(t, ts.URL, method, params, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Authorization": "Bearer " + token})
	}
	errorOf := func(a runtimetest.RPCAnswer) string {
		if a.Error == nil {
			return ""
		}
		return fmt.Sprint(a.Error.Code, " ", strings.ReplaceAll(a.Error.Message, "nope", "pdf-processing"))
	}
	// What a caller gets for a skill that does not exist, as the caller
	// without the scope should get for this one.
	with := iss.Token(t, jose.RS256, "alice", "notes:use")
	unknownGet := errorOf(rpc(with, "skills/get", map[string]any{"uri": "skill://nope/SKILL.md"}))
	unknownDir := errorOf(rpc(with, "resources/directory/read", map[string]any{"uri": "skill://nope"}))
	unknownRead := errorOf(rpc(with, "resources/read", map[string]any{"uri": "skill://nope/SKILL.md"}))
	if unknownGet == "" || unknownDir == "" || unknownRead == "" {
		t.Fatalf("a skill that does not exist: %q %q %q", unknownGet, unknownDir, unknownRead)
	}

	for _, tc := range []struct {
		name, token string
		sees        bool
	}{
		{"with notes:use", with, true},
		{"without it", iss.Token(t, jose.RS256, "bob", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := rpc(tc.token, "skills/list", map[string]any{})
			skills, _ := l.Result["skills"].([]any)
			if l.Error != nil || (len(skills) == 1) != tc.sees || len(skills) > 1 {
				t.Errorf("skills/list = %v %+v, want the skill %t", l.Result, l.Error, tc.sees)
			}
			lr := rpc(tc.token, "resources/list", map[string]any{})
			if listed := strings.Contains(fmt.Sprint(lr.Result["resources"]), "skill://pdf-processing/SKILL.md"); listed != tc.sees {
				t.Errorf("resources/list = %v %+v: the SKILL.md listed %t, want %t", lr.Result, lr.Error, listed, tc.sees)
			}
			for _, c := range []struct {
				method, uri, unknown string
			}{
				{"skills/get", "skill://pdf-processing/SKILL.md", unknownGet},
				{"resources/directory/read", "skill://pdf-processing", unknownDir},
				{"resources/read", "skill://pdf-processing/SKILL.md", unknownRead},
				{"resources/read", "skill://pdf-processing/references/FORMS.md", strings.ReplaceAll(unknownRead, "SKILL.md", "references/FORMS.md")},
			} {
				got := errorOf(rpc(tc.token, c.method, map[string]any{"uri": c.uri}))
				switch {
				case tc.sees && got != "":
					t.Errorf("%s %s: %s", c.method, c.uri, got)
				case !tc.sees && got != c.unknown:
					t.Errorf("%s %s: %q, want the answer for a skill that does not exist, %q", c.method, c.uri, got, c.unknown)
				}
			}
		})
	}
}
