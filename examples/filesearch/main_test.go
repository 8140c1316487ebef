package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/runtime"
)

var testNow = time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)

// tree writes a small search root and returns the runtime serving it:
//
//	README.md           two lines, a TODO
//	data.json
//	crlf.txt            five lines with \r\n endings
//	long.txt            one 3000-character line, then a TODO
//	old.txt             a TODO, modified 30 days before testNow
//	big.log             11 MB (sparse), a TODO at the start
//	bin.dat             binary, with TODO inside
//	src/main.go         a handler func and a lower-case todo
//	src/util/strings.go
//	.hidden/secret.txt  a TODO
//	.git/config         a TODO
//	link -> src/main.go
//	escape -> ../outside.txt, outside the root
func tree(t *testing.T) (*runtime.Runtime, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	files := map[string]string{
		"README.md":           "# Demo\nTODO: write docs\n",
		"data.json":           `{"a": 1}`,
		"crlf.txt":            "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n",
		"long.txt":            strings.Repeat("é", 3000) + "\nTODO at the end",
		"old.txt":             "TODO from last month\n",
		"bin.dat":             "TODO\x00\x01\x02",
		"src/main.go":         "package main\n\nfunc fooHandler(w int) {}\n\n// todo: more\n",
		"src/util/strings.go": "package util\n",
		".hidden/secret.txt":  "TODO hidden\n",
		".git/config":         "TODO git\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, testNow.Add(-time.Hour), testNow.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	old := testNow.Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "old.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	big.WriteString("TODO in a big file\n")
	big.Truncate(11 << 20)
	big.Close()
	os.WriteFile(filepath.Join(base, "outside.txt"), []byte("TODO outside\n"), 0o644)
	for link, target := range map[string]string{"link": "src/main.go", "escape": "../outside.txt"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("no symlinks: %v", err)
		}
	}
	s, err := newSearcher(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.root.Close() })
	s.now = func() time.Time { return testNow }
	return serve(t, Handlers(s)...), dir
}

// The tools' structured content as the tests read it: plain values,
// decoded from the JSON on their own, so that an absent optional field
// reads as its zero value.
type (
	matches struct {
		Paths         []string `json:"paths"`
		LineNumbers   []int    `json:"line_numbers"`
		Lines         []string `json:"lines"`
		FilesSearched int      `json:"files_searched"`
		Truncated     bool     `json:"truncated"`
	}
	fileLines struct {
		Content    string `json:"content"`
		FirstLine  int    `json:"first_line"`
		TotalLines int    `json:"total_lines"`
		Truncated  bool   `json:"truncated"`
		NextOffset int    `json:"next_offset"`
	}
	listing struct {
		Names     []string `json:"names"`
		Kinds     []string `json:"kinds"`
		Sizes     []int64  `json:"sizes"`
		Truncated bool     `json:"truncated"`
	}
	fileInfo struct {
		Kind       string `json:"kind"`
		SizeBytes  int64  `json:"size_bytes"`
		ModifiedAt string `json:"modified_at"`
		MIMEType   string `json:"mime_type"`
		IsText     bool   `json:"is_text"`
		SHA256     string `json:"sha256"`
		LinkTarget string `json:"link_target"`
	}
)

// ok calls a tool that must succeed and decodes its structured content
// into a value of type T.
func ok[T any](t *testing.T, rt *runtime.Runtime, tool, args string) T {
	t.Helper()
	res, _ := call(t, rt, tool, args)
	if res.IsError {
		t.Fatalf("%s %s: tool error %q", tool, args, res.Content[0].Text)
	}
	var out T
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func fails(t *testing.T, rt *runtime.Runtime, tool, args, want string) {
	t.Helper()
	res, _ := call(t, rt, tool, args)
	if !res.IsError || !strings.Contains(res.Content[0].Text, want) {
		t.Errorf("%s %s: %+v, want a tool error containing %q", tool, args, res.Content, want)
	}
}

func where(m matches) string {
	var out []string
	for i, p := range m.Paths {
		out = append(out, fmt.Sprintf("%s:%d", p, m.LineNumbers[i]))
	}
	return strings.Join(out, " ")
}

func TestSearchFiles(t *testing.T) {
	rt, _ := tree(t)
	for _, tc := range []struct{ args, want string }{
		{`{"query":"todo"}`, "README.md:2 long.txt:2 old.txt:1 src/main.go:5"},
		{`{"query":"TODO","case_sensitive":true}`, "README.md:2 long.txt:2 old.txt:1"},
		{`{"query":"todo","modified_within":"P7D"}`, "README.md:2 long.txt:2 src/main.go:5"},
		{`{"query":"todo","modified_within":"PT30M"}`, ""},
		{`{"query":"todo","include_hidden":true}`, ".hidden/secret.txt:1 README.md:2 long.txt:2 old.txt:1 src/main.go:5"},
		{`{"query":"func \\w+Handler\\(","regex":true,"case_sensitive":true,"glob":"**/*.go"}`, "src/main.go:3"},
		{`{"query":"package","path":"src"}`, "src/main.go:1 src/util/strings.go:1"},
		{`{"query":"package","path":"src/util/.."}`, "src/main.go:1 src/util/strings.go:1"},
		{`{"query":"package","path":"src","glob":"*.go"}`, "src/main.go:1"},
		{`{"query":"package","glob":"src/**/*.{go,md}"}`, "src/main.go:1 src/util/strings.go:1"},
		{`{"query":"o","glob":"*.txt","case_sensitive":true}`, "crlf.txt:1 crlf.txt:2 crlf.txt:4 old.txt:1"},
	} {
		m := ok[matches](t, rt, "search_files", tc.args)
		if got := where(m); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
		if m.Truncated {
			t.Errorf("%s: truncated", tc.args)
		}
	}

	m := ok[matches](t, rt, "search_files", `{"query":"todo"}`)
	if m.FilesSearched != 7 {
		// README.md, data.json, crlf.txt, long.txt, old.txt, src/main.go, src/util/strings.go
		t.Errorf("files_searched %d, want 7 (hidden, binary and big files are skipped)", m.FilesSearched)
	}
	if m.Lines[0] != "TODO: write docs" || m.Lines[1] != "TODO at the end" {
		t.Errorf("lines %q", m.Lines)
	}
	cut := ok[matches](t, rt, "search_files", `{"query":"éé"}`)
	if len(cut.Lines) != 1 || cut.Lines[0] != strings.Repeat("é", 500) {
		t.Errorf("a 3000-character line: %d lines of %v characters, want one of 500", len(cut.Lines), len([]rune(cut.Lines[0])))
	}
	if three := ok[matches](t, rt, "search_files", `{"query":"todo","max_results":3}`); where(three) != "README.md:2 long.txt:2 old.txt:1" || !three.Truncated {
		t.Errorf("max_results 3 of 4 matches: %q, truncated %v", where(three), three.Truncated)
	}
	if four := ok[matches](t, rt, "search_files", `{"query":"todo","max_results":4}`); where(four) != "README.md:2 long.txt:2 old.txt:1 src/main.go:5" || four.Truncated {
		t.Errorf("exactly max_results matches: %q, truncated %v; want all four, not truncated", where(four), four.Truncated)
	}

	fails(t, rt, "search_files", `{"query":"x","path":"../outside"}`, "leaves the search root")
	fails(t, rt, "search_files", `{"query":"x","path":"README.md"}`, "is a file")
	fails(t, rt, "search_files", `{"query":"x","path":"nope"}`, "nope does not exist")
	fails(t, rt, "search_files", `{"query":"(","regex":true}`, "not an RE2 regular expression")
	fails(t, rt, "search_files", `{"query":"x","glob":"{a,b"}`, "without a }")
	fails(t, rt, "search_files", `{"query":"x","path":"/etc"}`, "path") // the contract's pattern
	fails(t, rt, "search_files", `{"query":""}`, "query")
}

func TestReadFile(t *testing.T) {
	rt, _ := tree(t)
	got := ok[map[string]any](t, rt, "read_file", `{"path":"README.md"}`)
	if fmt.Sprint(got) != "map[content:# Demo\nTODO: write docs first_line:1 total_lines:2 truncated:false]" {
		t.Errorf("README.md: %v", got)
	}
	for _, tc := range []struct {
		args string
		want fileLines
	}{
		{`{"path":"crlf.txt","limit":2}`, fileLines{Content: "one\ntwo", FirstLine: 1, TotalLines: 5, Truncated: true, NextOffset: 2}},
		{`{"path":"crlf.txt","offset":2,"limit":2}`, fileLines{Content: "three\nfour", FirstLine: 3, TotalLines: 5, Truncated: true, NextOffset: 4}},
		{`{"path":"crlf.txt","offset":4,"limit":2}`, fileLines{Content: "five", FirstLine: 5, TotalLines: 5}},
		{`{"path":"crlf.txt","offset":9}`, fileLines{Content: "", FirstLine: 10, TotalLines: 5}},
		{`{"path":"src/../link","limit":1}`, fileLines{Content: "package main", FirstLine: 1, TotalLines: 5, Truncated: true, NextOffset: 1}},
		{`{"path":"long.txt","offset":1}`, fileLines{Content: "TODO at the end", FirstLine: 2, TotalLines: 2}},
	} {
		if got := ok[fileLines](t, rt, "read_file", tc.args); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.args, got, tc.want)
		}
	}
	long := ok[fileLines](t, rt, "read_file", `{"path":"long.txt","limit":1}`)
	if long.Content != strings.Repeat("é", 2000) {
		t.Errorf("a 3000-character line comes back as %d characters, want 2000", len([]rune(long.Content)))
	}

	fails(t, rt, "read_file", `{"path":"bin.dat"}`, "not a text file")
	fails(t, rt, "read_file", `{"path":"src"}`, "is a directory")
	fails(t, rt, "read_file", `{"path":"missing.txt"}`, "does not exist")
	fails(t, rt, "read_file", `{"path":"../outside.txt"}`, "leaves the search root")
	fails(t, rt, "read_file", `{"path":"src/../../outside.txt"}`, "leaves the search root")
	fails(t, rt, "read_file", `{"path":"escape"}`, "escape leads outside the search root")
	fails(t, rt, "read_file", `{"path":"/etc/passwd"}`, "path")
	fails(t, rt, "read_file", `{"path":"README.md","limit":2001}`, "limit")
}

func TestListDirectory(t *testing.T) {
	rt, _ := tree(t)
	root := ok[listing](t, rt, "list_directory", `{}`)
	want := listing{
		Names: []string{"src/", "README.md", "big.log", "bin.dat", "crlf.txt", "data.json", "escape", "link", "long.txt", "old.txt"},
		Kinds: []string{"dir", "file", "file", "file", "file", "file", "symlink", "symlink", "file", "file"},
		Sizes: []int64{0, 24, 11 << 20, 7, 29, 8, 0, 0, 6016, 21},
	}
	if fmt.Sprint(root) != fmt.Sprint(want) {
		t.Errorf("the root:\n got %+v\nwant %+v", root, want)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"recursive":true,"glob":"**/*.go"}`, "[src/main.go src/util/strings.go]"},
		{`{"recursive":true,"kinds":["dir"]}`, "[src/ src/util/]"},
		{`{"path":"src","recursive":true}`, "[util/ main.go util/strings.go]"},
		{`{"path":"src","glob":"*.go"}`, "[main.go]"},
		{`{"kinds":["symlink"]}`, "[escape link]"},
		{`{"include_hidden":true,"kinds":["dir"]}`, "[.git/ .hidden/ src/]"},
		{`{"include_hidden":true,"recursive":true,"glob":"**/.hidden/*"}`, "[.hidden/secret.txt]"},
	} {
		if got := ok[listing](t, rt, "list_directory", tc.args); fmt.Sprint(got.Names) != tc.want || got.Truncated {
			t.Errorf("%s: %v (truncated %v), want %s", tc.args, got.Names, got.Truncated, tc.want)
		}
	}
	if two := ok[listing](t, rt, "list_directory", `{"max_entries":2}`); fmt.Sprint(two.Names) != "[src/ README.md]" || !two.Truncated {
		t.Errorf("max_entries 2: %+v", two)
	}
	fails(t, rt, "list_directory", `{"kinds":["socket"]}`, `"socket" is not a kind`)
	fails(t, rt, "list_directory", `{"path":"README.md"}`, "is a file")
	fails(t, rt, "list_directory", `{"path":".."}`, "leaves the search root")
	fails(t, rt, "list_directory", `{"max_entries":0}`, "max_entries")
}

func TestFileInfo(t *testing.T) {
	rt, dir := tree(t)
	data, _ := os.ReadFile(filepath.Join(dir, "data.json"))
	sum := sha256.Sum256(data)
	want := fileInfo{Kind: "file", SizeBytes: 8, ModifiedAt: "2025-03-01T11:00:00Z", MIMEType: "application/json", IsText: true, SHA256: hex.EncodeToString(sum[:])}
	if got := ok[fileInfo](t, rt, "file_info", `{"path":"data.json"}`); got != want {
		t.Errorf("data.json:\n got %+v\nwant %+v", got, want)
	}
	if got := ok[fileInfo](t, rt, "file_info", `{"path":"crlf.txt"}`); got.MIMEType != "text/plain; charset=utf-8" || !got.IsText {
		t.Errorf("crlf.txt: %+v", got)
	}
	if got := ok[fileInfo](t, rt, "file_info", `{"path":"long.txt"}`); !got.IsText {
		t.Errorf("long.txt, whose two-byte runes straddle the reads: %+v, want text", got)
	}
	if got := ok[fileInfo](t, rt, "file_info", `{"path":"bin.dat"}`); got.IsText || got.Kind != "file" || got.SHA256 == "" {
		t.Errorf("bin.dat: %+v, want a binary file with a hash", got)
	}
	if got := ok[map[string]any](t, rt, "file_info", `{"path":"."}`); fmt.Sprint(got) != "map[is_text:false kind:dir modified_at:"+got["modified_at"].(string)+" size_bytes:0]" {
		t.Errorf(".: %v, want a dir without mime_type or sha256", got)
	}
	for link, target := range map[string]string{"link": "src/main.go", "escape": "../outside.txt"} {
		got := ok[fileInfo](t, rt, "file_info", `{"path":"`+link+`"}`)
		if got.Kind != "symlink" || got.LinkTarget != target || got.SHA256 != "" || got.MIMEType != "" {
			t.Errorf("%s: %+v, want a symlink to %s", link, got, target)
		}
	}
	fails(t, rt, "file_info", `{"path":"nope"}`, "nope does not exist")
	fails(t, rt, "file_info", `{"path":"src/../.."}`, "leaves the search root")
}

func TestGlobRegexp(t *testing.T) {
	for _, tc := range []struct {
		glob    string
		match   []string
		noMatch []string
	}{
		{"**/*", []string{"a", "a/b", "a/b/c.go"}, nil},
		{"*.go", []string{"main.go"}, []string{"src/main.go", "main.gox"}},
		{"**/*.go", []string{"main.go", "a/b/main.go"}, []string{"main.md"}},
		{"src/**/*.{ts,tsx}", []string{"src/a.ts", "src/x/y/a.tsx"}, []string{"src/a.js", "lib/a.ts"}},
		{"**/testdata", []string{"testdata", "a/testdata"}, []string{"a/testdata/x"}},
		{"file?.[ch]", []string{"file1.c", "fileX.h"}, []string{"file10.c", "file1.go"}},
		{"[!a]*", []string{"b"}, []string{"a"}},
		{`a\*b`, []string{"a*b"}, []string{"axb"}},
		{"a.b+c", []string{"a.b+c"}, []string{"aXb+c", "a.bbc"}},
	} {
		re, err := globRegexp(tc.glob)
		if err != nil {
			t.Fatalf("%s: %v", tc.glob, err)
		}
		for _, p := range tc.match {
			if !re.MatchString(p) {
				t.Errorf("%s does not match %s", tc.glob, p)
			}
		}
		for _, p := range tc.noMatch {
			if re.MatchString(p) {
				t.Errorf("%s matches %s", tc.glob, p)
			}
		}
	}
	for _, bad := range []string{"{a", "a}", "[ab"} {
		if _, err := globRegexp(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT30M": 30 * time.Minute, "P7D": 7 * 24 * time.Hour, "P2W": 14 * 24 * time.Hour,
		"PT1H30M5S": time.Hour + 30*time.Minute + 5*time.Second, "P1Y": 365 * 24 * time.Hour, "P1M": 30 * 24 * time.Hour,
		"P1000000Y": time.Duration(1<<63 - 1),
	} {
		if got, err := parseISODuration(in); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "7D", "P1H", "PT1D", "P1.5D"} {
		if _, err := parseISODuration(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestLineReader(t *testing.T) {
	in := strings.Repeat("x", 200<<10) + "\r\nsecond\n\nlast"
	lr := lineReader{r: bufio.NewReaderSize(strings.NewReader(in), 16), max: 10}
	var got []string
	for {
		line, ok, err := lr.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, string(line))
	}
	if want := []string{"xxxxxxxxxx", "second", "", "last"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

func TestIsText(t *testing.T) {
	for in, want := range map[string]bool{
		"":             true,
		"plain":        true,
		"caf\xc3\xa9":  true,
		"caf\xc3":      true, // é cut by the end of the sample
		"caf\xc3x":     false,
		"nul\x00":      false,
		"\xff\xfe\x00": false,
	} {
		if got := isText([]byte(in)); got != want {
			t.Errorf("isText(%q) = %v", in, got)
		}
	}
	// Across writes, a rune may be split; at the end, a cut rune is not text.
	c := textCheck{text: true}
	c.Write([]byte("caf\xc3"))
	c.Write([]byte("\xa9!"))
	if !c.isText(false) {
		t.Errorf("é split across two writes is not text")
	}
	c.Write([]byte("\xc3"))
	if c.isText(false) || !c.isText(true) {
		t.Errorf("a file that ends in half a rune: isText(false) %v, isText(true) %v", c.isText(false), c.isText(true))
	}
}

// TestSearchRoot: the root is the one configured, else the contract's
// directory that toolc passes; never the working directory, which is / for
// a plugin under Claude Desktop.
func TestSearchRoot(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		want    string
		wantErr string
	}{
		{map[string]string{"TOOLC_FILESEARCH_ROOT": "/srv/docs", "TOOLC_SERVICE_DIR": "/repo/examples/filesearch"}, "/srv/docs", ""},
		{map[string]string{"TOOLC_SERVICE_DIR": "/repo/examples/filesearch"}, "/repo/examples/filesearch", ""},
		{map[string]string{}, "", "no search root: set TOOLC_FILESEARCH_ROOT"},
	} {
		got, err := searchRoot(func(k string) string { return tc.env[k] })
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("searchRoot(%v) = %q, %v; want %q, %q", tc.env, got, err, tc.want, tc.wantErr)
		}
	}
}
