package tokens_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/compiler"
	"github.com/toolc/toolc/tokens"
)

// referenceFile holds texts and their o200k_base counts by js-tiktoken,
// the JavaScript port of OpenAI's tiktoken: what toolc counts for the
// examples' tools in each target (real definitions, in the TypeScript
// and JSON that toolc counts), and the texts that take each way through
// the split. The texts are stored, not rebuilt, so that a change to a
// projection or an example leaves the reference as it is.
//
// TOOLC_UPDATE_REFERENCE=1 go test -run TestReference ./tokens rebuilds
// it, with Node and js-tiktoken (see jsTiktoken).
const referenceFile = "testdata/o200k_reference.json"

type reference struct {
	Counter string          `json:"counter"`
	Texts   []referenceText `json:"texts"`
}

type referenceText struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	Text   string `json:"text"`
}

// jsTiktokenVersion is the js-tiktoken that scripts/conformance installs.
const jsTiktokenVersion = "1.0.21"

func TestReference(t *testing.T) {
	if os.Getenv("TOOLC_UPDATE_REFERENCE") != "" {
		updateReference(t)
	}
	data, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Texts) < 20 {
		t.Fatalf("%s holds %d texts", referenceFile, len(ref.Texts))
	}
	for _, r := range ref.Texts {
		if got := tokens.CountO200k(r.Text); got != r.Tokens {
			t.Errorf("%s: toolc counts %d tokens, %s %d", r.Name, got, ref.Counter, r.Tokens)
		}
	}
	// With Node, the stored counts are checked against js-tiktoken too.
	if node, dir := jsTiktoken(t); node != "" {
		texts := make([]string, len(ref.Texts))
		for i, r := range ref.Texts {
			texts[i] = r.Text
		}
		for i, n := range countJS(t, node, dir, texts) {
			if n != ref.Texts[i].Tokens {
				t.Errorf("%s: %s stores %d tokens, js-tiktoken counts %d", ref.Texts[i].Name, referenceFile, ref.Texts[i].Tokens, n)
			}
		}
	}
}

// jsTiktoken returns node and the js-tiktoken package directory, from
// TOOLC_NODE and TOOLC_JS_TIKTOKEN, which scripts/conformance writes to
// .cache/conformance/clients.env and scripts/test sets; or "" when they
// are not set, unless TOOLC_REQUIRE_NODE says they must be.
func jsTiktoken(t *testing.T) (node, dir string) {
	node, dir = os.Getenv("TOOLC_NODE"), os.Getenv("TOOLC_JS_TIKTOKEN")
	if node == "" || dir == "" {
		if os.Getenv("TOOLC_REQUIRE_NODE") != "" || os.Getenv("TOOLC_UPDATE_REFERENCE") != "" {
			t.Fatal("TOOLC_NODE or TOOLC_JS_TIKTOKEN is not set; scripts/conformance writes both to .cache/conformance/clients.env")
		}
		t.Log("TOOLC_NODE or TOOLC_JS_TIKTOKEN is not set: checked against the stored js-tiktoken counts only")
		return "", ""
	}
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatalf("TOOLC_JS_TIKTOKEN: %v", err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version != jsTiktokenVersion {
		t.Fatalf("TOOLC_JS_TIKTOKEN is js-tiktoken %q, want %s", pkg.Version, jsTiktokenVersion)
	}
	return node, dir
}

func countJS(t *testing.T, node, dir string, texts []string) []int {
	t.Helper()
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/count.mjs")
	cmd.Env = append(os.Environ(), "TOOLC_JS_TIKTOKEN="+dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node testdata/count.mjs: %v\n%s", err, stderr.String())
	}
	var counts []int
	if err := json.Unmarshal(out, &counts); err != nil || len(counts) != len(texts) {
		t.Fatalf("node testdata/count.mjs wrote %q (%v)", out, err)
	}
	return counts
}

// updateReference rebuilds the reference file from the examples' tools
// and the tricky texts, counted by js-tiktoken.
func updateReference(t *testing.T) {
	node, dir := jsTiktoken(t)
	res, err := compiler.Compile(compiler.Config{Dir: "../examples"}, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if res.HasErrors() {
		t.Fatalf("the examples do not compile: %v", res.Diagnostics)
	}
	var texts []referenceText
	for _, tc := range []struct {
		target catalog.Target
		strict bool
	}{{catalog.OpenAIChat, false}, {catalog.OpenAIChat, true}, {catalog.Anthropic, false}, {catalog.Anthropic, true}, {catalog.Gemini, false}, {catalog.MCP, false}} {
		s, err := tokens.RequestText(res.Catalog, tc.target, tc.strict)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("examples %s", tc.target)
		if tc.strict {
			name += " strict"
		}
		texts = append(texts, referenceText{Name: name, Text: s})
	}
	for i, s := range tokens.Tricky {
		texts = append(texts, referenceText{Name: fmt.Sprintf("tricky %d", i), Text: s})
	}
	all := make([]string, len(texts))
	for i, r := range texts {
		all[i] = r.Text
	}
	for i, n := range countJS(t, node, dir, all) {
		texts[i].Tokens = n
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	if err := enc.Encode(reference{Counter: "js-tiktoken@" + jsTiktokenVersion + " o200k_base", Texts: texts}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(referenceFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d texts", referenceFile, len(texts))
}
