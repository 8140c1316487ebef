package catalog_test

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/toolc/toolc/catalog"
)

//go:embed testdata/weather.catalog.json
var testdataFS embed.FS

// weatherCatalogFile is the catalog file of examples/weather, compiled in
// the module root; TestCatalogFileGolden keeps it current.
const weatherCatalogFile = "testdata/weather.catalog.json"

func exampleCatalog(t *testing.T, name string) *catalog.Catalog {
	t.Helper()
	for _, ex := range examples(t) {
		if ex.name == name {
			return ex.cat
		}
	}
	t.Fatalf("no example %q", name)
	return nil
}

func marshal(t *testing.T, c *catalog.Catalog) []byte {
	t.Helper()
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCatalogFileGolden pins the bytes of one catalog file, so that a
// change to the file format shows in review.
func TestCatalogFileGolden(t *testing.T) {
	got := marshal(t, exampleCatalog(t, "weather"))
	if *update {
		if err := os.WriteFile(weatherCatalogFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(weatherCatalogFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./catalog -update):\n%s", weatherCatalogFile, lineDiff(string(want), string(got)))
	}
	for _, key := range []string{`"format": "toolc.catalog/v1"`, `"fingerprint": "sha256:`, `"pos":"examples/weather/weather.cue:`} {
		if !bytes.Contains(got, []byte(key)) {
			t.Errorf("the catalog file lacks %s", key)
		}
	}
}

// TestRoundTrip: Marshal, Parse and Marshal again give the same bytes, for
// every example and for a catalog that uses every kind of field.
func TestRoundTrip(t *testing.T) {
	cats := map[string]*catalog.Catalog{"every kind of field": kitchenSink()}
	for _, ex := range examples(t) {
		cats[ex.name] = ex.cat
	}
	cats["empty"] = &catalog.Catalog{}
	cats["upstream"] = upstreamCatalog()
	for name, c := range cats {
		t.Run(name, func(t *testing.T) {
			first := marshal(t, c)
			parsed, err := catalog.Parse(first)
			if err != nil {
				t.Fatalf("Parse(Marshal()): %v\n%s", err, first)
			}
			if parsed.Fingerprint != c.Fingerprint {
				t.Errorf("fingerprint %s after the round trip, want %s", parsed.Fingerprint, c.Fingerprint)
			}
			if second := marshal(t, parsed); !bytes.Equal(first, second) {
				t.Errorf("Marshal(Parse(data)) != data:\n%s", lineDiff(string(first), string(second)))
			}
			// The compiler's values keep CUE's kinds (an integral number is
			// int64); the kitchen sink's have the types Parse restores.
			if name == "every kind of field" && !reflect.DeepEqual(values(c), values(parsed)) {
				t.Errorf("values changed Go types in the round trip:\n%#v\n%#v", values(c), values(parsed))
			}
			for i, svc := range c.Services {
				if !reflect.DeepEqual(svc.Upstream, parsed.Services[i].Upstream) {
					t.Errorf("service %s: upstream %+v after the round trip, want %+v", svc.Name, parsed.Services[i].Upstream, svc.Upstream)
				}
			}
			for _, target := range catalog.Targets() {
				a, _ := c.ProjectJSON(target, catalog.ProjectOptions{})
				b, _ := parsed.ProjectJSON(target, catalog.ProjectOptions{})
				if !bytes.Equal(a, b) {
					t.Errorf("%s projection changed in the round trip:\n%s", target, lineDiff(string(a), string(b)))
				}
			}
		})
	}
}

// values collects every value of a catalog, with its Go types: defaults,
// enums and examples of fields and of records' fields, and tools'
// examples.
func values(c *catalog.Catalog) []any {
	var out []any
	var fields func(fs []*catalog.Field)
	fields = func(fs []*catalog.Field) {
		for _, f := range fs {
			out = append(out, f.Default, f.Enum, f.Examples)
			fields(f.Fields)
		}
	}
	for _, t := range c.Tools() {
		fields(t.Request.Fields)
		if t.Response != nil {
			fields(t.Response.Fields)
		}
		for _, ex := range t.Examples {
			out = append(out, ex)
		}
	}
	return out
}

// upstreamCatalog has two services served by upstream MCP servers, one
// with every key of the block.
func upstreamCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "docs", Version: "1.0.0", Description: "Docs", Dir: "svc/docs", Handler: ".",
		Upstream: &catalog.Upstream{
			Command: []string{"npx", "-y", "@acme/docs-mcp@1.4.0"}, Dir: "work",
			Env:          []catalog.ValueFrom{{Name: "CA", File: "/run/secrets/ca.pem"}, {Name: "TOKEN", Env: "DOCS_TOKEN", Prefix: "tok:"}},
			StartTimeout: "10s", CallTimeout: "1m", CheckInterval: "5m",
		},
		Tools: []*catalog.Tool{{Name: "get-doc", Description: "Get a doc", MCPName: "getDoc", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}, {
		Name: "wiki", Version: "1.0.0", Description: "Wiki", Dir: "svc/wiki", Handler: ".",
		Upstream: &catalog.Upstream{URL: "https://wiki.internal/mcp", Headers: []catalog.ValueFrom{{Name: "Authorization", Env: "WIKI_TOKEN", Prefix: "Bearer "}}},
		Tools:    []*catalog.Tool{{Name: "search", Description: "Search", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}}}
	c.Seal()
	return c
}

// kitchenSink is a catalog with every type, bound and value kind that the
// IR holds.
func kitchenSink() *catalog.Catalog {
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	yes, no := true, false
	c := &catalog.Catalog{Services: []*catalog.Service{{
		Name: "sink", Version: "0.1.0", Description: "Every kind of field", Dir: "svc/sink", Handler: ".", MCPTitle: "Sink",
		Pos: catalog.Pos{File: "svc/sink/sink.cue", Line: 5, Column: 1},
		Tools: []*catalog.Tool{{
			Name: "everything", Description: "Take every kind of field", Title: "Everything", Deprecated: true, Strict: true,
			Annotations: catalog.Annotations{ReadOnly: &yes, Destructive: &no},
			MCPName:     "sink_all",
			Scopes:      []string{"sink:read", "sink:write"},
			Request: catalog.Message{Description: "All of them", Fields: []*catalog.Field{
				{Name: "flag", Type: catalog.Boolean, Description: "A flag", Required: false, Default: true},
				{Name: "ids", Type: catalog.Array, Items: catalog.Integer, Description: "IDs", MinItems: i64(1), MaxItems: i64(5), UniqueItems: true, Required: true, Examples: []any{[]any{int64(1), int64(2)}}},
				{Name: "level", Type: catalog.Integer, Description: "A level", Enum: []any{int64(1), int64(2), int64(3)}, Default: int64(2)},
				{Name: "name", Type: catalog.String, Description: "A name <b>", Required: true, MinLength: i64(1), MaxLength: i64(10), Pattern: `^[a-z<>]+$`, Examples: []any{"abc"}},
				{Name: "ratio", Type: catalog.Number, Description: "A ratio", Minimum: f64(0), ExclusiveMaximum: f64(1.5), Default: 0.25},
				{Name: "scores", Type: catalog.Array, Items: catalog.Number, Description: "Scores", Default: []any{0.5, 1.25}},
				{Name: "when", Type: catalog.String, Format: "date-time", Description: "When", Deprecated: true, ExclusiveMinimum: nil},
				{Name: "big", Type: catalog.Number, Description: "A big number", Maximum: f64(1e300), ExclusiveMinimum: f64(-2.5)},
				// A record: its items' values are normalized for their fields
				// (an integer's 3 is int64, a number's 2 float64).
				{Name: "edits", Type: catalog.Array, Items: catalog.Object, Description: "Edits", MinItems: i64(1), Fields: []*catalog.Field{
					{Name: "at", Type: catalog.Integer, Description: "Line", Required: true, Minimum: f64(1), Default: nil, Examples: []any{int64(3)}},
					{Name: "weight", Type: catalog.Number, Description: "Weight", Default: 2.0, Enum: nil},
					{Name: "text", Type: catalog.String, Description: "Text", Enum: []any{"a", "b"}, Default: "a"},
					{Name: "marks", Type: catalog.Array, Items: catalog.Integer, Description: "Marks", Default: []any{int64(1), int64(2)}},
				}, Examples: []any{[]any{map[string]any{"at": int64(3), "weight": 2.0, "marks": []any{int64(4)}}}}},
			}},
			Response: &catalog.Message{Fields: []*catalog.Field{
				{Name: "ok", Type: catalog.Boolean, Description: "Whether it worked", Required: true},
			}},
			Examples: []map[string]any{{"ids": []any{int64(1)}, "name": "x", "ratio": 0.5, "edits": []any{map[string]any{"at": int64(7), "weight": 1.0}}}, {}},
		}, {
			Name: "nothing", Description: "Take nothing", Request: catalog.Message{Fields: []*catalog.Field{}},
		}},
	}}}
	c.Seal()
	return c
}

// TestMarshalDeterministic: the same catalog gives the same bytes every
// time, and HTML-like text is not escaped.
func TestMarshalDeterministic(t *testing.T) {
	a := marshal(t, kitchenSink())
	for range 20 {
		if b := marshal(t, kitchenSink()); !bytes.Equal(a, b) {
			t.Fatal("Marshal is not deterministic")
		}
	}
	if !bytes.Contains(a, []byte(`"A name <b>"`)) {
		t.Error("Marshal escaped HTML characters")
	}
	if !bytes.HasSuffix(a, []byte("}\n")) {
		t.Error("a catalog file does not end in a newline")
	}
}

// TestParseRejects: every kind of bad input gives a FormatError whose
// message says what is wrong.
func TestParseRejects(t *testing.T) {
	good := marshal(t, exampleCatalog(t, "weather"))
	text := string(good)
	replace := func(old, new string) []byte {
		t.Helper()
		if !strings.Contains(text, old) {
			t.Fatalf("the weather catalog lacks %q", old)
		}
		return []byte(strings.Replace(text, old, new, 1))
	}
	// editFingerprint changes the first hex digit of the fingerprints
	// that prefix matches: the catalog's or a tool's.
	editFingerprint := func(prefix string) []byte {
		t.Helper()
		re := regexp.MustCompile(prefix + `"sha256:([0-9a-f])`)
		if !re.MatchString(text) {
			t.Fatalf("no fingerprint after %s", prefix)
		}
		return []byte(re.ReplaceAllStringFunc(text, func(m string) string {
			last := m[len(m)-1]
			return m[:len(m)-1] + string("10"[min(1, int(last-'0'))])
		}))
	}
	tests := []struct {
		name string
		data []byte
		want string // regexp
	}{
		{"newer format", replace(`"toolc.catalog/v1"`, `"toolc.catalog/v2"`), `format "toolc\.catalog/v2" is newer than "toolc\.catalog/v1".*upgrade toolc`},
		{"older format", replace(`"toolc.catalog/v1"`, `"toolc.catalog/v0"`), `format "toolc\.catalog/v0" is older than "toolc\.catalog/v1".*rebuild`},
		{"odd format version", replace(`"toolc.catalog/v1"`, `"toolc.catalog/vNext"`), `format "toolc\.catalog/vNext" is not "toolc\.catalog/v1"`},
		{"other format", replace(`"toolc.catalog/v1"`, `"openapi/3.1"`), `format "openapi/3\.1": not a toolc catalog`},
		{"no format", []byte(`{"services": []}`), `no "format" key: not a toolc catalog`},
		{"array", []byte(`[{"format": "toolc.catalog/v1"}]`), `not a toolc catalog: the file holds a JSON array`},
		{"string", []byte(`"toolc.catalog/v1"`), `not a toolc catalog: the file holds a JSON string`},
		{"empty", []byte("\n"), `empty file`},
		{"format not a string", replace(`"format": "toolc.catalog/v1"`, `"format": 1`), `line 2, column 13: format must not be number`},
		{"corrupt", replace(`"name":"weather-service"`, `"name";"weather-service"`), `corrupt file at line \d+, column \d+: invalid character ';'`},
		{"wrong type", replace(`"pos":"examples/weather/weather.cue:5:1"`, `"pos":5`), `corrupt file at line 5, column \d+: services\.pos must not be number`},
		{"bad position", replace(`"pos":"examples/weather/weather.cue:5:1"`, `"pos":"examples/weather/weather.cue"`), `corrupt file at line 5, column 37: position "examples/weather/weather\.cue" is not file:line:column`},
		{"trailing data", append(append([]byte{}, good...), "{}"...), `invalid character '\{' after top-level value|trailing data`},
		{"unknown key", replace(`"version":"1.2.0"`, `"version":"1.2.0","owner":"me"`), `unknown key "owner": the file was edited, or written by another version`},
		{"unknown key in a field", replace(`"name":"city",`, `"name":"city","nullable":true,`), `unknown key "nullable"`},
		{"edited tool description", replace(`"Query the weather forecast for a city"`, `"Query the weather forecast for any city"`),
			`tool "query_weather" of service "weather-service" does not match its fingerprint: the file was edited or damaged; rebuild it with toolc build`},
		{"edited field bound", replace(`"maximum":14`, `"maximum":15`), `tool "query_weather" .* does not match its fingerprint`},
		{"edited tool fingerprint", editFingerprint(`"fingerprint":`), `tool "query_weather" .* does not match its fingerprint`},
		{"edited service description", replace(`"Weather lookups backed by the national forecast service"`, `"Weather lookups"`),
			`the catalog does not match its fingerprint: the file was edited or damaged`},
		{"edited catalog fingerprint", editFingerprint(`(?m)^  "fingerprint": `), `the catalog does not match its fingerprint`},
		{"null service", replace(`"services": [`, `"services": [null,`), `a service is null`},
		{"number out of range", replace(`"maximum":14`, `"maximum":1e999`), `maximum must not be number 1e999`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := catalog.Parse(tt.data)
			if err == nil {
				t.Fatalf("Parse accepted it: %d services", len(c.Services))
			}
			var fe *catalog.FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *catalog.FormatError", err)
			}
			if !strings.HasPrefix(err.Error(), "catalog: ") {
				t.Errorf("error %q does not start with \"catalog: \"", err)
			}
			if !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("error %q does not match %q", err, tt.want)
			}
		})
	}
}

// TestParseTruncated cuts a catalog file at many points: every cut is an
// error that says the file is truncated, never a catalog with less in it.
func TestParseTruncated(t *testing.T) {
	good := marshal(t, exampleCatalog(t, "issuetracker"))
	end := len(bytes.TrimRight(good, "\n"))
	cuts := []int{1, 2, 10, end / 4, end / 3, end / 2, 2 * end / 3, 3 * end / 4, end - 10, end - 2, end - 1}
	for _, n := range cuts {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			_, err := catalog.Parse(good[:n])
			if err == nil {
				t.Fatalf("Parse accepted the first %d of %d bytes", n, len(good))
			}
			if !strings.Contains(err.Error(), "truncated file") {
				t.Errorf("cut at %d: %v, want a truncated-file error", n, err)
			}
		})
	}
	if _, err := catalog.Parse(good[:end]); err != nil {
		t.Errorf("without its final newline the file is still whole: %v", err)
	}
}

// TestParseCorruptPosition: the line and column of a syntax error are
// where the damage is.
func TestParseCorruptPosition(t *testing.T) {
	good := string(marshal(t, exampleCatalog(t, "weather")))
	lines := strings.Split(good, "\n")
	for i, l := range lines {
		if j := strings.Index(l, `"handler":`); j >= 0 {
			lines[i] = l[:j] + `"handler" . "."` + ","
			_, err := catalog.Parse([]byte(strings.Join(lines, "\n")))
			want := "line " + strconv.Itoa(i+1) + ", column " + strconv.Itoa(j+len(`"handler" `)+1) + ":"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v does not point at %s", err, want)
			}
			return
		}
	}
	t.Fatal("no handler line")
}

// TestParsePositionsAreNotFingerprinted: a file's positions may change (a
// declaration moved) without changing what the tools are.
func TestParsePositionsAreNotFingerprinted(t *testing.T) {
	good := string(marshal(t, exampleCatalog(t, "weather")))
	edited := regexp.MustCompile(`(\.cue):\d+`).ReplaceAllString(good, `$1:99`)
	c, err := catalog.Parse([]byte(edited))
	if err != nil {
		t.Fatalf("moved positions: %v", err)
	}
	if c.Services[0].Tools[0].Pos.Line != 99 {
		t.Errorf("Parse lost the position: %+v", c.Services[0].Tools[0].Pos)
	}
}

func TestLoad(t *testing.T) {
	want := marshal(t, exampleCatalog(t, "weather"))
	check := func(t *testing.T, c *catalog.Catalog, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if got := marshal(t, c); !bytes.Equal(got, want) {
			t.Errorf("loaded catalog differs from the compiled one:\n%s", lineDiff(string(want), string(got)))
		}
	}
	t.Run("embed.FS", func(t *testing.T) {
		c, err := catalog.Load(testdataFS, weatherCatalogFile)
		check(t, c, err)
	})
	t.Run("MapFS", func(t *testing.T) {
		c, err := catalog.Load(fstest.MapFS{"dir/toolc.catalog.json": {Data: want}}, "dir/toolc.catalog.json")
		check(t, c, err)
	})
	t.Run("LoadFile", func(t *testing.T) {
		c, err := catalog.LoadFile(weatherCatalogFile)
		check(t, c, err)
	})
	t.Run("missing", func(t *testing.T) {
		_, err := catalog.Load(fstest.MapFS{}, "toolc.catalog.json")
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load of a missing file = %v, want fs.ErrNotExist", err)
		}
		_, err = catalog.LoadFile(filepath.Join(t.TempDir(), "nope.json"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("LoadFile of a missing file = %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("bad file names the file", func(t *testing.T) {
		bad := bytes.Replace(want, []byte("toolc.catalog/v1"), []byte("toolc.catalog/v2"), 1)
		_, err := catalog.Load(fstest.MapFS{"cat.json": {Data: bad}}, "cat.json")
		var fe *catalog.FormatError
		if err == nil || !strings.HasPrefix(err.Error(), "cat.json: catalog: format") || !errors.As(err, &fe) {
			t.Errorf("Load = %v, want an error naming cat.json that wraps a FormatError", err)
		}
	})
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "toolc.catalog.json")
	c := exampleCatalog(t, "weather")
	if err := c.WriteFile(name); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, marshal(t, c)) {
		t.Error("WriteFile wrote other bytes than Marshal")
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	// Overwrite an existing file.
	if err := kitchenSink().WriteFile(name); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(name); !bytes.Equal(got, marshal(t, kitchenSink())) {
		t.Error("WriteFile did not replace the file")
	}
	assertOnly(t, dir, "toolc.catalog.json")

	t.Run("into a missing directory", func(t *testing.T) {
		if err := c.WriteFile(filepath.Join(dir, "nope", "x.json")); err == nil {
			t.Error("WriteFile into a missing directory succeeded")
		}
		assertOnly(t, dir, "toolc.catalog.json")
	})
	t.Run("over a directory", func(t *testing.T) {
		sub := filepath.Join(dir, "sub")
		if err := os.MkdirAll(filepath.Join(sub, "taken.json", "inner"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteFile(filepath.Join(sub, "taken.json")); err == nil {
			t.Error("WriteFile over a non-empty directory succeeded")
		}
		assertOnly(t, sub, "taken.json")
		if fi, err := os.Stat(filepath.Join(sub, "taken.json", "inner")); err != nil || !fi.IsDir() {
			t.Error("WriteFile damaged the directory in its way")
		}
	})
}

// TestWriteFileNeverHalf reads the file while it is rewritten over and
// over: every read is a whole catalog, the old one or the new one.
func TestWriteFileNeverHalf(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "toolc.catalog.json")
	cats := []*catalog.Catalog{exampleCatalog(t, "issuetracker"), kitchenSink()}
	if err := cats[0].WriteFile(name); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range 100 {
			if err := cats[i%2].WriteFile(name); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads := 0
	for {
		select {
		case <-done:
			wg.Wait()
			if reads == 0 {
				t.Error("no reads while writing")
			}
			assertOnly(t, dir, "toolc.catalog.json")
			return
		default:
		}
		if _, err := catalog.LoadFile(name); err != nil {
			t.Fatalf("read %d saw a broken catalog: %v", reads, err)
		}
		reads++
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %v, want only %v (a temporary file left behind?)", dir, got, names)
	}
}
