package lock_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/lock"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.lock")

func ptr[T any](v T) *T { return &v }

// testCatalog is two services as the compiler lowers them, with every
// kind of value a lock records.
func testCatalog() *catalog.Catalog {
	return &catalog.Catalog{Services: []*catalog.Service{
		{
			Name: "weather-service", Version: "1.2.0", Description: "Weather", Dir: "examples/weather", Handler: ".",
			Pos:    catalog.Pos{File: "examples/weather/weather.cue", Line: 5, Column: 1},
			Scopes: []string{"weather:read"},
			// Skills: the lock keeps their names, URIs and descriptions,
			// and the service's scopes; not their directories.
			Skills: []*catalog.Skill{
				{Name: "storm-warnings", Dir: "guides/storms", Description: "Explain a storm warning <to the public>"},
				{Name: "forecast-reading", Dir: "skills/forecast-reading", Description: "Read a forecast aloud"},
			},
			Tools: []*catalog.Tool{{
				Name: "query_weather", Description: "Query the weather <forecast> for a city", Title: "Weather",
				Annotations: catalog.Annotations{ReadOnly: ptr(true), OpenWorld: ptr(true)},
				Request: catalog.Message{Description: "A forecast query", Fields: []*catalog.Field{
					{Name: "city", Type: catalog.String, Description: "City name", Required: true, MinLength: ptr[int64](1), Pattern: "^<[A-Z].*>$"},
					{Name: "days", Type: catalog.Integer, Description: "Days", Default: int64(3), Minimum: ptr(1.0), Maximum: ptr(14.0)},
					{Name: "unit", Type: catalog.String, Description: "Unit", Enum: []any{"fahrenheit", "celsius"}, Default: "celsius"},
					{Name: "hours", Type: catalog.Array, Items: catalog.Integer, Description: "Hours", MaxItems: ptr[int64](24), UniqueItems: true},
					{Name: "ratio", Type: catalog.Number, Description: "Ratio", Enum: nil, ExclusiveMinimum: ptr(0.5), Default: 0.75},
				}},
				Response: &catalog.Message{Fields: []*catalog.Field{
					{Name: "summary", Type: catalog.String, Description: "One line", Required: true},
					{Name: "high_c", Type: catalog.Number, Description: "High", Required: true},
				}},
				Examples: []map[string]any{{"city": "Berlin"}},
				Pos:      catalog.Pos{File: "examples/weather/weather.cue", Line: 10, Column: 9},
			}},
		},
		{
			Name: "billing", Version: "0.3.0", Description: "Invoices", Dir: "billing", Handler: ".",
			Tools: []*catalog.Tool{
				{Name: "void_invoice", Description: "Void", MCPName: "void", Request: catalog.Message{Fields: []*catalog.Field{
					{Name: "priority", Type: catalog.Integer, Description: "Priority", Enum: []any{int64(3), int64(1), int64(2)}, Required: true},
					// A record: its items' fields are locked as lines[].sku.
					{Name: "lines", Type: catalog.Array, Items: catalog.Object, Description: "Lines to credit", MinItems: ptr[int64](1), Fields: []*catalog.Field{
						{Name: "sku", Type: catalog.String, Description: "Product", Required: true, Pattern: "^[A-Z]+$"},
						{Name: "qty", Type: catalog.Integer, Description: "Quantity", Default: int64(1), Minimum: ptr(1.0)},
					}},
				}}},
				{Name: "send_invoice", Description: "Send", Request: catalog.Message{Fields: []*catalog.Field{}}},
			},
		},
	}}
}

// TestGolden pins the file format: sorted services, tools, fields and enum
// values, no positions, no HTML escapes, and a trailing newline.
func TestGolden(t *testing.T) {
	got := lock.FromCatalog(testCatalog()).Marshal()
	golden := filepath.Join("testdata", "golden.lock")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Marshal differs from %s (go test ./lock -update rewrites it):\n%s", golden, got)
	}
	if _, err := lock.Parse(want); err != nil {
		t.Errorf("Parse(%s): %v", golden, err)
	}
}

// TestStable checks that the lock is the same bytes whatever the order in
// which the compiler found services, tools, fields and enum values, and
// after a round trip through the file.
func TestStable(t *testing.T) {
	want := lock.FromCatalog(testCatalog()).Marshal()
	if again := lock.FromCatalog(testCatalog()).Marshal(); !bytes.Equal(again, want) {
		t.Fatal("two Marshals of one catalog differ")
	}
	c := testCatalog()
	slices.Reverse(c.Services)
	for _, s := range c.Services {
		slices.Reverse(s.Skills)
		slices.Reverse(s.Tools)
		for _, tl := range s.Tools {
			slices.Reverse(tl.Request.Fields)
			for _, f := range tl.Request.Fields {
				slices.Reverse(f.Enum)
			}
		}
	}
	if got := lock.FromCatalog(c).Marshal(); !bytes.Equal(got, want) {
		t.Errorf("reordered input gives other bytes:\n%s\nwant:\n%s", got, want)
	}
	l, err := lock.Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Marshal(); !bytes.Equal(got, want) {
		t.Errorf("Marshal(Parse(data)) != data:\n%s", got)
	}
	if d := lock.Diff(l, lock.FromCatalog(testCatalog())); len(d) != 0 {
		t.Errorf("a parsed lock differs from the catalog it was made from: %v", d)
	}
	// Values keep their Go types through the file.
	days := l.Services[1].Tools[0].Request.Fields[1]
	if days.Name != "days" || days.Default != int64(3) {
		t.Errorf("days default = %#v (%T), want int64(3)", days.Default, days.Default)
	}
	ratio := l.Services[1].Tools[0].Request.Fields[3]
	if ratio.Name != "ratio" || ratio.Default != 0.75 {
		t.Errorf("ratio default = %#v, want 0.75", ratio.Default)
	}
}

// TestFingerprints checks that a request's fingerprint ignores what a
// model reads and covers what the wire carries.
func TestFingerprints(t *testing.T) {
	fp := func(edit func(*catalog.Catalog)) string {
		c := testCatalog()
		edit(c)
		return lock.FromCatalog(c).Services[1].Tools[0].Request.Fingerprint
	}
	base := fp(func(*catalog.Catalog) {})
	same := map[string]func(*catalog.Catalog){
		"field description": func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[0].Description = "Another" },
		"request description": func(c *catalog.Catalog) {
			c.Services[0].Tools[0].Request.Description = "Another"
		},
		"position": func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[0].Pos.Line = 99 },
		// The lock sorts fields and enum values; a fingerprint taken before
		// that sort must equal one taken after (issue 24: tool-renamed).
		"field order": func(c *catalog.Catalog) { slices.Reverse(c.Services[0].Tools[0].Request.Fields) },
		"enum order":  func(c *catalog.Catalog) { slices.Reverse(c.Services[0].Tools[0].Request.Fields[2].Enum) },
	}
	for name, edit := range same {
		if fp(edit) != base {
			t.Errorf("%s changed the request fingerprint", name)
		}
	}
	differ := map[string]func(*catalog.Catalog){
		"field name": func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[0].Name = "town" },
		"required":   func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[0].Required = false },
		"bound":      func(c *catalog.Catalog) { c.Services[0].Tools[0].Request.Fields[1].Maximum = ptr(15.0) },
	}
	for name, edit := range differ {
		if fp(edit) == base {
			t.Errorf("%s left the request fingerprint as it was", name)
		}
	}
	// The same request, read back from its lock file, has the same
	// fingerprint as fresh from the catalog, whose fields are out of order.
	l, err := lock.Parse(lock.FromCatalog(testCatalog()).Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Services[1].Tools[0].Request.Fingerprint; got != base {
		t.Errorf("fingerprint from the lock file %s, from the catalog %s", got, base)
	}
}

func TestParseErrors(t *testing.T) {
	good := lock.FromCatalog(testCatalog()).Marshal()
	edited := bytes.Replace(good, []byte(`"Query the weather <forecast> for a city"`), []byte(`"Query the weather"`), 1)
	if bytes.Equal(edited, good) {
		t.Fatal("the hand edit did not apply")
	}
	tests := []struct {
		name string
		data string
		want string
	}{
		{"empty", "", `^lock: empty file: not a toolc lock file$`},
		{"not JSON", "toolc", `^lock: corrupt file at line 1, column 2: invalid character 'o' in literal true`},
		{"merge conflict", "<<<<<<< HEAD\n" + string(good), `^lock: corrupt file at line 1, column 1: .*\(a merge conflict\?\); regenerate it from the contracts with toolc lock$`},
		{"truncated", string(good[:len(good)/2]), `^lock: truncated file: the JSON ends early; regenerate it`},
		{"array", "[]", `^lock: not a toolc lock file: the file holds a JSON array, not an object$`},
		{"no format", `{"services": []}`, `^lock: no "format" key: not a toolc lock file$`},
		{"newer", `{"format": "toolc.lock/v2", "services": []}`, `^lock: format "toolc\.lock/v2" is newer than "toolc\.lock/v1", the version this toolc reads: upgrade toolc$`},
		{"older", `{"format": "toolc.lock/v0", "services": []}`, `^lock: format "toolc\.lock/v0" is older than "toolc\.lock/v1"`},
		{"a catalog", `{"format": "toolc.catalog/v1", "services": []}`, `^lock: format "toolc\.catalog/v1": a toolc catalog, not a lock file$`},
		{"unknown key", strings.Replace(string(good), `"format"`, `"extra": 1, "format"`, 1), `^lock: unknown key "extra": the file was edited, or written by another version of toolc; regenerate it`},
		{"wrong type", strings.Replace(string(good), `"required": true`, `"required": "yes"`, 1), `^lock: corrupt file at line \d+, column \d+: .*required must not be string`},
		{"hand edit", string(edited), `^lock: the file does not match its fingerprint: it was edited by hand or damaged \(a merge conflict\?\); regenerate it from the contracts with toolc lock$`},
		{"trailing", string(good) + "{}", `^lock: corrupt file at line \d+, column 1: invalid character '\{' after top-level value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lock.Parse([]byte(tt.data))
			if err == nil || !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("Parse error = %v, want match for %s", err, tt.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, lock.FileName)
	if _, err := lock.LoadFile(name); !os.IsNotExist(err) {
		t.Errorf("LoadFile of a missing file: %v, want not-exist", err)
	}
	l := lock.FromCatalog(testCatalog())
	if err := l.WriteFile(name); err != nil {
		t.Fatal(err)
	}
	got, err := lock.LoadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if got.File != name {
		t.Errorf("File = %q, want %q", got.File, name)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("WriteFile left %d files behind, want only the lock", len(entries))
	}
	if err := os.WriteFile(name, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.LoadFile(name); err == nil || !strings.HasPrefix(err.Error(), name+": lock: truncated file") {
		t.Errorf("LoadFile of a corrupt file: %v, want the file name and the problem", err)
	}
	if err := l.WriteFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("WriteFile onto a directory: %v", err)
	}
}

func TestSplit(t *testing.T) {
	l := &lock.Lock{}
	for _, dir := range []string{".", "examples/weather", "examples/filesearch", "billing", "billing/legacy", "../outside"} {
		l.Services = append(l.Services, &lock.Service{Name: dir, Dir: dir})
	}
	tests := []struct {
		patterns []string
		want     []string
	}{
		{nil, []string{".", "examples/weather", "examples/filesearch", "billing", "billing/legacy"}},
		{[]string{"./..."}, []string{".", "examples/weather", "examples/filesearch", "billing", "billing/legacy"}},
		{[]string{"./examples/..."}, []string{"examples/weather", "examples/filesearch"}},
		{[]string{"./examples/weather", "billing"}, []string{"examples/weather", "billing"}},
		{[]string{"billing/..."}, []string{"billing", "billing/legacy"}},
		{[]string{"./examples/weather/weather.cue"}, []string{"examples/weather"}},
		{[]string{"/work/examples/..."}, []string{"examples/weather", "examples/filesearch"}},
		{[]string{"."}, []string{"."}},
	}
	for _, tt := range tests {
		in, out := l.Split("/work", tt.patterns)
		var got []string
		for _, s := range in.Services {
			got = append(got, s.Dir)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.patterns, got, tt.want)
		}
		if len(in.Services)+len(out.Services) != len(l.Services) {
			t.Errorf("Split(%q) lost services", tt.patterns)
		}
	}
}

// TestScopesRoundTrip: a tool's scopes survive Marshal and Parse, so that
// a diff against a lock file reports no scope change where there is none,
// and a new scope where there is one.
func TestScopesRoundTrip(t *testing.T) {
	cat := &catalog.Catalog{Services: []*catalog.Service{{Name: "orders", Version: "1.0.0", Dir: "orders", Tools: []*catalog.Tool{{
		Name: "cancel_order", Scopes: []string{"orders:read", "orders:write"}, Request: catalog.Message{Fields: []*catalog.Field{}},
	}}}}}
	l, err := lock.Parse(lock.FromCatalog(cat).Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Services[0].Tools[0].Scopes; len(got) != 2 || got[1] != "orders:write" {
		t.Fatalf("scopes after Parse: %q", got)
	}
	if changes := lock.Diff(l, lock.FromCatalog(cat)); len(changes) != 0 {
		t.Errorf("a lock and its own catalog differ: %+v", changes)
	}
	cat.Services[0].Tools[0].Scopes = append(cat.Services[0].Tools[0].Scopes, "orders:zap")
	if changes := lock.Diff(l, lock.FromCatalog(cat)); len(changes) != 1 || changes[0].Rule != "scope-added" || !changes[0].Breaking {
		t.Errorf("a new scope: %+v", changes)
	}
}

func TestCatalog(t *testing.T) {
	c := &catalog.Catalog{Services: []*catalog.Service{
		{Name: "a", Dir: "a", Tools: []*catalog.Tool{{Name: "x", Description: "X", Strict: true, Examples: []map[string]any{{}},
			Request: catalog.Message{Fields: []*catalog.Field{{Name: "z", Type: catalog.String, Description: "Z"}, {Name: "y", Type: catalog.Integer, Description: "Y", Enum: []any{int64(2), int64(1)}}}}}}},
		{Name: "b", Dir: "other/b", Tools: []*catalog.Tool{{Name: "w", Description: "W"}}},
	}}
	l := lock.FromCatalog(c)
	got, exact := l.Catalog()
	if !exact || len(got.Services) != 2 || got.Services[0] != c.Services[0] {
		t.Errorf("Catalog of FromCatalog = %v, exact %v; want the catalog itself", got, exact)
	}
	in, _ := l.Split("", []string{"./a"})
	if got, exact := in.Catalog(); !exact || len(got.Services) != 1 || got.Services[0].Name != "a" {
		t.Errorf("Catalog of Split = %+v, exact %v; want service a alone", got, exact)
	}
	parsed, err := lock.Parse(l.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	got, exact = parsed.Catalog()
	if exact {
		t.Error("a parsed lock's catalog says it is exact")
	}
	x := got.Services[0].Tools[0]
	if x.Strict || x.Examples != nil || x.Description != "X" || len(x.Request.Fields) != 2 || x.Request.Fields[0].Name != "y" || x.Request.Fields[0].Enum[0] != int64(1) {
		t.Errorf("a parsed lock's tool = %+v; want it as the lock records it: fields and enums sorted, no strict, no examples", x)
	}
	if stripped, exact := l.Strip().Catalog(); exact || stripped.Services[0].Tools[0].Strict {
		t.Error("Strip kept the catalog")
	}
}

// TestSkills: a lock records each skill as a client sees it, reads back
// what it wrote, and a lock written before toolc recorded skills still
// loads, against which every skill is new and nothing else changed.
func TestSkills(t *testing.T) {
	l, err := lock.Parse(lock.FromCatalog(testCatalog()).Marshal())
	if err != nil {
		t.Fatal(err)
	}
	sks := l.Services[1].Skills
	if len(sks) != 2 || sks[0].Name != "forecast-reading" || sks[1].URI != "skill://storm-warnings/SKILL.md" ||
		sks[1].Description != "Explain a storm warning <to the public>" || !slices.Equal(sks[1].Scopes, []string{"weather:read"}) {
		t.Errorf("skills after Parse: %+v %+v", sks[0], sks[1])
	}
	if changes := lock.Diff(l, lock.FromCatalog(testCatalog())); len(changes) != 0 {
		t.Errorf("a lock and its own catalog differ: %+v", changes)
	}

	// testdata/before-skills.lock is testCatalog's lock as toolc wrote
	// it before it recorded skills (and before the service had a scope).
	data, err := os.ReadFile(filepath.Join("testdata", "before-skills.lock"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := lock.Parse(data)
	if err != nil {
		t.Fatalf("a lock without skills: %v", err)
	}
	c := testCatalog()
	c.Services[0].Scopes = nil
	var got []string
	for _, ch := range lock.Diff(old, lock.FromCatalog(c)) {
		got = append(got, ch.Kind()+" "+ch.Rule+" "+ch.Tool)
	}
	want := []string{"compatible skill-added forecast-reading", "compatible skill-added storm-warnings"}
	if !slices.Equal(got, want) {
		t.Errorf("against a lock without skills: %q, want %q", got, want)
	}
}

// TestSkillChanges diffs locks that differ in one skill, including what
// no contract edit can make today: a skill whose URI is not the one its
// name gives.
func TestSkillChanges(t *testing.T) {
	svc := func(sks ...*lock.Skill) *lock.Lock {
		return &lock.Lock{Services: []*lock.Service{{Name: "docs", Version: "1.0.0", Dir: "docs", Tools: []*lock.Tool{}, Skills: sks}}}
	}
	sk := func(name, uri, desc string, scopes ...string) *lock.Skill {
		return &lock.Skill{Name: name, URI: uri, Description: desc, Scopes: scopes}
	}
	pdf := sk("pdf", "skill://pdf/SKILL.md", "Fill PDF forms")
	tests := []struct {
		name     string
		old, new *lock.Lock
		want     []string
	}{
		{"same", svc(pdf), svc(sk("pdf", "skill://pdf/SKILL.md", "Fill PDF forms")), nil},
		{"removed", svc(pdf), svc(), []string{"breaking skill-removed"}},
		{"added", svc(), svc(pdf), []string{"compatible skill-added"}},
		{"description", svc(pdf), svc(sk("pdf", "skill://pdf/SKILL.md", "Fill and sign PDF forms")), []string{"compatible description-changed"}},
		{"uri", svc(pdf), svc(sk("pdf", "skills://pdf/SKILL.md", "Fill PDF forms")), []string{"breaking resource-uri-changed"}},
		{"scope added", svc(pdf), svc(sk("pdf", "skill://pdf/SKILL.md", "Fill PDF forms", "docs:read")), []string{"breaking scope-added"}},
		{"scope removed", svc(sk("pdf", "skill://pdf/SKILL.md", "Fill PDF forms", "docs:read")), svc(pdf), []string{"compatible scope-removed"}},
		{"renamed", svc(pdf), svc(sk("pdf-forms", "skill://pdf-forms/SKILL.md", "Fill PDF forms")), []string{"breaking skill-removed", "compatible skill-added"}},
		{"service gone", svc(pdf), &lock.Lock{Services: []*lock.Service{}}, []string{"breaking skill-removed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range lock.Diff(tt.old, tt.new) {
				got = append(got, c.Kind()+" "+c.Rule)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
	// A skill without a name is no lock that toolc writes.
	if _, err := lock.Parse(svc(sk("", "skill:///SKILL.md", "x")).Marshal()); err == nil || !strings.Contains(err.Error(), `service "docs": a skill has no name`) {
		t.Errorf("Parse of a nameless skill: %v", err)
	}
}
