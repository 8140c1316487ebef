package catalog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// The catalog writes its JSON without reflection, for speed. These tests
// hold that writer to encoding/json: the same values must give the same
// bytes, and the fingerprints must be the sha256 of what json.Marshal
// writes for the catalog with its positions blanked.

// catalogFile mirrors the catalog file's layout for encoding/json.
type catalogFile struct {
	Format      string             `json:"format"`
	Fingerprint string             `json:"fingerprint"`
	Services    []*catalog.Service `json:"services"`
}

// stdMarshalFile is encoding/json's encoding of the catalog file, compact:
// Marshal's output, compacted, must be exactly this. The file's line
// breaks are white space between values, which Compact removes and which
// TestCatalogFileGolden pins.
func stdMarshalFile(t *testing.T, c *catalog.Catalog) []byte {
	t.Helper()
	services := c.Services
	if services == nil {
		services = []*catalog.Service{}
	}
	return stdCompact(t, catalogFile{catalog.Format, c.Fingerprint, services})
}

// stdCompact is json.Marshal without HTML escaping.
func stdCompact(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func stdProjectJSON(t *testing.T, c *catalog.Catalog, target catalog.Target, opts catalog.ProjectOptions) []byte {
	t.Helper()
	v := project(c, target, opts)
	if target == catalog.OpenAIResponses {
		// Its MarshalJSON is the writer's: encode it without.
		v = stdResponses(v.([]catalog.OpenAIResponsesTool))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// stdResponses is the Responses projection as plain values that
// encoding/json writes with the keys of each type of tool.
func stdResponses(ts []catalog.OpenAIResponsesTool) []any {
	out := []any{}
	for _, t := range ts {
		switch t.Type {
		case "namespace":
			out = append(out, struct {
				Type        string `json:"type"`
				Name        string `json:"name"`
				Description string `json:"description"`
				Tools       []any  `json:"tools"`
			}{t.Type, t.Name, t.Description, stdResponses(t.Tools)})
		case "tool_search":
			out = append(out, struct {
				Type string `json:"type"`
			}{t.Type})
		default:
			out = append(out, struct {
				Type string `json:"type"`
				catalog.OpenAIFunction
				DeferLoading bool `json:"defer_loading,omitempty"`
			}{t.Type, t.OpenAIFunction, t.DeferLoading})
		}
	}
	return out
}

// stdFingerprints computes the fingerprints by their definition, with
// encoding/json (compact, without HTML escaping): a tool's is the sha256
// of the tool with every position blank and an empty fingerprint; the
// catalog's the sha256 of the services with every position and directory
// blank and each tool replaced by its fingerprint.
func stdFingerprints(t *testing.T, c *catalog.Catalog) (string, map[*catalog.Tool]string) {
	t.Helper()
	sum := func(data []byte) string {
		s := sha256.Sum256(data)
		return "sha256:" + hex.EncodeToString(s[:])
	}
	var stripFields func(fs []*catalog.Field) []*catalog.Field
	stripFields = func(fs []*catalog.Field) []*catalog.Field {
		if fs == nil {
			return nil
		}
		fields := make([]*catalog.Field, len(fs))
		for i, f := range fs {
			cp := *f
			cp.Pos = catalog.Pos{}
			cp.Fields = stripFields(f.Fields) // a record's
			fields[i] = &cp
		}
		return fields
	}
	strip := func(m catalog.Message) catalog.Message {
		m.Pos = catalog.Pos{}
		m.Fields = stripFields(m.Fields)
		if m.Fields == nil {
			m.Fields = []*catalog.Field{}
		}
		return m
	}
	tools := map[*catalog.Tool]string{}
	var services bytes.Buffer
	services.WriteByte('[')
	for i, s := range c.Services {
		if i > 0 {
			services.WriteByte(',')
		}
		var fps []string
		for _, tl := range s.Tools {
			cp := *tl
			cp.Fingerprint = ""
			cp.Pos = catalog.Pos{}
			cp.Request = strip(tl.Request)
			if tl.Response != nil {
				r := strip(*tl.Response)
				cp.Response = &r
			}
			fp := sum(stdCompact(t, &cp))
			tools[tl] = fp
			fps = append(fps, fp)
		}
		cp := *s
		cp.Pos = catalog.Pos{}
		cp.Dir = "" // where the contract is, like a position, is not what it is
		cp.Tools = nil
		// Prompts and resources are part of the service's form, without
		// their positions.
		cp.Prompts, cp.Resources = nil, nil
		for _, p := range s.Prompts {
			pc := *p
			pc.Pos, pc.Arguments = catalog.Pos{}, stripFields(p.Arguments)
			cp.Prompts = append(cp.Prompts, &pc)
		}
		for _, r := range s.Resources {
			rc := *r
			rc.Pos, rc.Variables = catalog.Pos{}, stripFields(r.Variables)
			cp.Resources = append(cp.Resources, &rc)
		}
		cp.Skills = nil
		for _, sk := range s.Skills {
			sc := *sk
			sc.Pos = catalog.Pos{}
			cp.Skills = append(cp.Skills, &sc)
		}
		// "tools" is the service's last key: put the fingerprints there.
		head, ok := bytes.CutSuffix(stdCompact(t, &cp), []byte(`"tools":null}`))
		if !ok {
			t.Fatalf("service %s: \"tools\" is not the last key", s.Name)
		}
		services.Write(head)
		services.WriteString(`"tools":`)
		services.Write(stdCompact(t, append([]string{}, fps...)))
		services.WriteByte('}')
	}
	services.WriteByte(']')
	return sum(services.Bytes()), tools
}

// awkward returns a catalog whose strings and numbers exercise every
// escape and number format that encoding/json has.
func awkward() *catalog.Catalog {
	c := kitchenSink()
	tl := c.Services[0].Tools[0]
	tl.Description = "Quotes \" and \\ backslashes, <html> & ampersands, tabs\t, newlines\n, \x00\x01\x1f controls, \b\f, " +
		"é ünïcödé, emoji 🙂, line\u2028and paragraph\u2029separators, invalid \xff\xfe UTF-8, and a lone \xe2\x82 prefix"
	tl.Examples = append(tl.Examples, map[string]any{"name": "<&>", "ratio": 1e-7, "ids": []any{int64(math.MaxInt64), int64(math.MinInt64)}})
	f := tl.Request.Field("ratio")
	f.Default = 1e21
	f.Enum = []any{0.1, 1e-6, 1e-7, 123456789.125, 1e20, 1e21, -0.0, 5e-324, math.MaxFloat64}
	c.Seal()
	return c
}

func TestWriterMatchesEncodingJSON(t *testing.T) {
	cats := map[string]*catalog.Catalog{"kitchen sink": kitchenSink(), "awkward": awkward(), "empty": {}, "deferred": deferredCatalog()}
	for _, ex := range examples(t) {
		cats[ex.name] = ex.cat
	}
	for name, c := range cats {
		t.Run(name, func(t *testing.T) {
			got := marshal(t, c)
			if want := stdMarshalFile(t, c); compact(got) != string(want) {
				t.Errorf("Marshal differs from encoding/json:\n%s", lineDiff(string(want), compact(got)))
			}
			fp, tools := stdFingerprints(t, c)
			if c.Fingerprint != fp {
				t.Errorf("catalog fingerprint %s, want %s", c.Fingerprint, fp)
			}
			for tl, want := range tools {
				if tl.Fingerprint != want {
					t.Errorf("tool %s fingerprint %s, want %s", tl.Name, tl.Fingerprint, want)
				}
			}
			checkProjectJSON(t, c)
			// Invalid UTF-8 is written as U+FFFD, as encoding/json does, so
			// the awkward catalog does not survive a round trip; contracts
			// are CUE, whose strings are always valid UTF-8.
			if name != "awkward" {
				if _, err := catalog.Parse(got); err != nil {
					t.Errorf("Parse(Marshal()): %v", err)
				}
			}
		})
	}
}

// checkProjectJSON holds every projection of c to encoding/json's
// encoding of the typed projection's value.
func checkProjectJSON(t *testing.T, c *catalog.Catalog) {
	t.Helper()
	for _, target := range catalog.Targets() {
		for _, m := range modes {
			got, err := c.ProjectJSON(target, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := stdProjectJSON(t, c, target, m.opts); !bytes.Equal(got, want) {
				t.Errorf("%s%s: ProjectJSON differs from encoding/json:\n%s", target, m.suffix, lineDiff(string(want), string(got)))
			}
		}
	}
}

// TestWriterRandomValues compares the writer with encoding/json on random
// strings and numbers, through a field's description, default and enum.
func TestWriterRandomValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", " ", "\"", "\\", "<", ">", "&", "\n", "\t", "\x00", "\x7f", "é", "\u2028", "\u2029", "🙂", "\xff", "\xc3", "\xed\xa0\x80", "\U0010ffff"}
	for i := range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = float64(i)
		}
		scale := math.Pow(10, float64(rng.IntN(60)-30))
		c := &catalog.Catalog{Services: []*catalog.Service{{Name: s, Tools: []*catalog.Tool{{
			Name: "t", Description: s, MCPName: s,
			Request: catalog.Message{Fields: []*catalog.Field{{Name: s, Type: catalog.Number, Description: s, Default: f, Enum: []any{float64(float32(rng.Float64() * scale)), rng.Float64() * scale, int64(rng.Uint64())}}}},
		}}}}}
		got := marshal(t, c)
		if want := stdMarshalFile(t, c); compact(got) != string(want) {
			t.Fatalf("string %q, number %v: Marshal differs from encoding/json:\n%s", s, f, lineDiff(string(want), string(got)))
		}
		fp, _ := stdFingerprints(t, c)
		if fp != c.Fingerprint {
			t.Fatalf("string %q, number %v: fingerprint differs", s, f)
		}
		for _, target := range []catalog.Target{catalog.MCP, catalog.Gemini, catalog.OpenAIChat} {
			got, _ := c.ProjectJSON(target, catalog.ProjectOptions{Strict: true})
			if want := stdProjectJSON(t, c, target, catalog.ProjectOptions{Strict: true}); !bytes.Equal(got, want) {
				t.Fatalf("string %q: %s differs from encoding/json:\n%s", s, target, lineDiff(string(want), string(got)))
			}
		}
	}
}

// TestMarshalNaN: a number JSON cannot hold is an error, not a file.
func TestMarshalNaN(t *testing.T) {
	c := kitchenSink()
	c.Services[0].Tools[0].Request.Fields[0].Default = math.NaN()
	defer func() {
		if recover() == nil {
			t.Error("sealing a catalog holding NaN did not panic")
		}
	}()
	c.Marshal()
}

// bigCatalog has n services of 4*m tools each: the kitchen sink's and the
// awkward catalog's, renamed.
func bigCatalog(n, m int) *catalog.Catalog {
	big := &catalog.Catalog{}
	for i := range n {
		s := *awkward().Services[0]
		s.Name = fmt.Sprintf("svc%d", i)
		s.Tools = nil
		for j := range m {
			for _, tl := range append(kitchenSink().Services[0].Tools, awkward().Services[0].Tools...) {
				tl.Name = fmt.Sprintf("%s_%d_%d", tl.Name, i, j)
				tl.MCPName = ""
				s.Tools = append(s.Tools, tl)
			}
		}
		big.Services = append(big.Services, &s)
	}
	return big
}

// TestProjectJSONInHalves: a catalog large enough for ProjectJSON to write
// in two halves at once gives the bytes encoding/json writes, and an
// error in either half is the projection's error.
func TestProjectJSONInHalves(t *testing.T) {
	big := bigCatalog(3, 60)
	checkProjectJSON(t, big)
	// Values that the size estimate leaves out: the halves outgrow their
	// room in the buffer.
	for _, tl := range []*catalog.Tool{big.Services[0].Tools[0], big.Services[2].Tools[0]} {
		f := tl.Request.Field("name")
		for i := range 5000 {
			f.Enum = append(f.Enum, fmt.Sprintf("value %d", i))
		}
	}
	checkProjectJSON(t, big)
	for _, s := range []*catalog.Service{big.Services[0], big.Services[2]} {
		f := s.Tools[len(s.Tools)-2].Request.Field("ratio")
		keep := f.Default
		f.Default = math.Inf(1)
		if _, err := big.ProjectJSON(catalog.MCP, catalog.ProjectOptions{}); err == nil || !strings.Contains(err.Error(), "+Inf") {
			t.Errorf("infinity in service %s: error %v", s.Name, err)
		}
		f.Default = keep
	}
}
