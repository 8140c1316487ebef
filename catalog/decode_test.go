package catalog_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// Parse decodes with a fast decoder of its own and falls back to
// encoding/json on anything unusual. These tests hold the fast decoder to
// two promises: it accepts every file Marshal writes (or loading would be
// slow), and whatever it accepts decodes exactly as encoding/json decodes
// it.

func catalogFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, ex := range examples(t) {
		data, err := ex.cat.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		files[ex.name] = data
	}
	for name, c := range map[string]*catalog.Catalog{"kitchen sink": kitchenSink(), "awkward": awkward(), "empty": {}} {
		data, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return files
}

// checkAgree fails when the fast decoder accepts data and decodes it
// otherwise than encoding/json.
func checkAgree(t *testing.T, name string, data []byte) (fastOK bool) {
	t.Helper()
	fast, ok, slow, err := catalog.DecodeBoth(data)
	if !ok {
		return false
	}
	if err != nil {
		t.Errorf("%s: the fast decoder accepts what encoding/json rejects (%v):\n%.300s", name, err, data)
		return true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: the fast decoder and encoding/json decode differently:\n%.300s", name, data)
	}
	return true
}

func TestDecodeFastAcceptsMarshal(t *testing.T) {
	for name, data := range catalogFiles(t) {
		if !checkAgree(t, name, data) {
			t.Errorf("%s: the fast decoder does not accept what Marshal writes", name)
		}
		compact := new(bytes.Buffer)
		if err := json.Compact(compact, data); err != nil {
			t.Fatal(err)
		}
		if !checkAgree(t, name+" compact", compact.Bytes()) {
			t.Errorf("%s: the fast decoder does not accept the file without white space", name)
		}
	}
}

// TestParseVerifiesFromText: Parse verifies the fingerprints of a file
// that Marshal wrote by hashing the file's own text, without encoding a
// tool again (or a catalog of 2000 tools would not load in time), and
// also when the file was re-indented.
func TestParseVerifiesFromText(t *testing.T) {
	for name, data := range catalogFiles(t) {
		var indented bytes.Buffer
		if err := json.Indent(&indented, data, "", "\t"); err != nil {
			t.Fatal(err)
		}
		for form, data := range map[string][]byte{"as written": data, "indented": indented.Bytes()} {
			matched, tools := catalog.VerifiedFromText(data)
			if matched != tools {
				t.Errorf("%s, %s: %d of %d tools verified from the file's text", name, form, matched, tools)
			}
			if _, err := catalog.Parse(data); err != nil {
				t.Errorf("%s, %s: %v", name, form, err)
			}
		}
	}
}

// TestDecodeFastAgrees mutates catalog files in ways that the fast decoder
// must either refuse or decode as encoding/json does.
func TestDecodeFastAgrees(t *testing.T) {
	mutations := map[string]func(s string) string{
		"escaped letters": func(s string) string { return strings.ReplaceAll(s, `"name":"`, `"name":"\u0061`) },
		"escaped key":     func(s string) string { return strings.Replace(s, `"name"`, `"n\u0061me"`, 1) },
		"upper-case key":  func(s string) string { return strings.Replace(s, `"name"`, `"Name"`, 1) },
		"duplicate key":   func(s string) string { return strings.Replace(s, `"version":`, `"version":"0","version":`, 1) },
		"null tools":      func(s string) string { return strings.Replace(s, `"tools":[`, `"tools":null,"x":[`, 1) },
		"null enum": func(s string) string {
			return strings.Replace(s, `"required":true,`, `"required":true,"enum":null,`, 1)
		},
		"position object": func(s string) string { return strings.Replace(s, `"pos":"`, `"pos":{"file":"a.cue"},"x":"`, 1) },
		"bad position":    func(s string) string { return strings.Replace(s, `.cue:`, `.cue;`, 1) },
		"float bound":     func(s string) string { return strings.Replace(s, `"minLength":1`, `"minLength":1.0`, 1) },
		"exponent bound":  func(s string) string { return strings.Replace(s, `"minLength":1`, `"minLength":1e0`, 1) },
		"huge number":     func(s string) string { return strings.Replace(s, `"minimum":1`, `"minimum":1e400`, 1) },
		"negative zero":   func(s string) string { return strings.Replace(s, `"minimum":1`, `"minimum":-0`, 1) },
		// Values are normalized by the type of the items, which the fast
		// decoder wants before them.
		"items last": func(s string) string {
			return regexp.MustCompile(`,"items":("[a-z]+")([^{}]*)\}`).ReplaceAllString(s, `$2,"items":$1}`)
		},
		"spaces":       func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `,"`, `, "`), `":`, `": `) },
		"tabs and CRs": func(s string) string { return strings.ReplaceAll(s, "\n  ", "\r\n\t") },
		"BOM":          func(s string) string { return "\ufeff" + s },
		"trailing":     func(s string) string { return s + " x" },
		"no format":    func(s string) string { return strings.Replace(s, `"format"`, `"formats"`, 1) },
		"format last": func(s string) string {
			s = strings.Replace(s, `"format": "toolc.catalog/v1",`, ``, 1)
			return strings.TrimSuffix(s, "}\n") + `, "format": "toolc.catalog/v1"}`
		},
		"control char": func(s string) string { return strings.Replace(s, `"description":"`, "\"description\":\"\x01", 1) },
		"raw unicode":  func(s string) string { return strings.ReplaceAll(s, `"description":"`, `"description":"é\u2028 `) },
		"deep example": func(s string) string {
			return strings.Replace(s, `"examples":[`, `"examples":[`+strings.Repeat("[", 20000), 1)
		},
	}
	// The mutations that the fast decoder takes on itself; it leaves the
	// rest to encoding/json.
	fastMutations := map[string]bool{"tabs and CRs": true, "format last": true, "escaped letters": true, "negative zero": true, "raw unicode": true, "spaces": true, "items last": true}
	for name, data := range catalogFiles(t) {
		for mname, mutate := range mutations {
			fast := checkAgree(t, name+"/"+mname, []byte(mutate(string(data))))
			if name == "weather" && fast != fastMutations[mname] {
				t.Errorf("weather/%s: the fast decoder accepted it: %v, want %v", mname, fast, fastMutations[mname])
			}
		}
		// Random damage: flip, cut and insert bytes.
		rng := rand.New(rand.NewPCG(uint64(len(data)), 7))
		for range 300 {
			b := append([]byte(nil), data...)
			if len(b) == 0 {
				break
			}
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				const chars = "{}[],:\"\\ 0a-.eE"
				b[i] = chars[rng.IntN(len(chars))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			case 2:
				b = append(b[:i], append([]byte{" \"1,}"[rng.IntN(5)]}, b[i:]...)...)
			}
			checkAgree(t, name+"/random", b)
		}
	}
}

// FuzzParse: whatever the fast decoder accepts, encoding/json accepts and
// decodes the same way.
func FuzzParse(f *testing.F) {
	for _, data := range catalogFiles(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"format":"toolc.catalog/v1","services":[{"tools":[{"examples":[{"a":[1,{"b":null}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgree(t, "fuzz", data)
		catalog.Parse(data) // must not panic
	})
}

// TestPlainRun: the word-at-a-time count of plain bytes stops exactly where
// a byte-by-byte one does.
func TestPlainRun(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return i
			}
		}
		return len(b)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("aZ0 ~!\"\\\x00\x1f\x20\x7f\x80\xff\xc3")
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = 'a'
			if rng.IntN(8) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		if got, want := catalog.PlainRun(b), naive(b); got != want {
			t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
		}
	}
}

// TestPosText: a position's text form reads back as written, and one
// that is not file:line:column is an error.
func TestPosText(t *testing.T) {
	for _, p := range []catalog.Pos{{}, {File: "a.cue", Line: 1, Column: 2}, {File: "c:/x:y.cue", Line: 123456789, Column: 0},
		{File: "", Line: 3, Column: 4}, {File: "f", Line: 1234567890123, Column: -1}, {File: "f1", Line: 0, Column: 9}} {
		text, err := p.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got catalog.Pos
		if err := got.UnmarshalText(text); err != nil || got != p {
			t.Errorf("%q reads back as %+v, %v; want %+v", text, got, err, p)
		}
	}
	for text, want := range map[string]catalog.Pos{"f:+1:2": {File: "f", Line: 1, Column: 2}, "f:01:002": {File: "f", Line: 1, Column: 2}} {
		var got catalog.Pos
		if err := got.UnmarshalText([]byte(text)); err != nil || got != want {
			t.Errorf("%q reads as %+v, %v; want %+v", text, got, err, want)
		}
	}
	for _, text := range []string{"f", "f:1", "1:2", "f:x:2", "f:1:", "f::2", "f:1:2x"} {
		var got catalog.Pos
		if err := got.UnmarshalText([]byte(text)); err == nil {
			t.Errorf("%q reads as %+v, want an error", text, got)
		}
	}
}

// TestDecodeInHalves: a services array decoded in two halves at once
// decodes as encoding/json decodes it, damaged or not.
func TestDecodeInHalves(t *testing.T) {
	big := bigCatalog(5, 2)
	// The awkward catalog's invalid UTF-8 does not survive a round trip.
	for _, s := range big.Services {
		for _, tl := range s.Tools {
			tl.Description = strings.ToValidUTF8(tl.Description, "?")
		}
	}
	data, err := big.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, data []byte) {
		t.Helper()
		fast, split, ok := catalog.DecodeInHalves(data)
		_, _, slow, err := catalog.DecodeBoth(data)
		switch {
		case ok && err != nil:
			t.Errorf("%s: the fast decoder accepts what encoding/json rejects (%v)", name, err)
		case ok && !reflect.DeepEqual(fast, slow):
			t.Errorf("%s: the halves and encoding/json decode differently", name)
		case name == "as written" && !(ok && split):
			t.Errorf("%s: decoded in halves: %v, accepted: %v", name, split, ok)
		}
	}
	check("as written", data)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		b := append([]byte(nil), data...)
		i := rng.IntN(len(b))
		const chars = "{}[],:\"\\ 0a-.eE\n"
		b[i] = chars[rng.IntN(len(chars))]
		check("damaged", b)
	}
	// A file whose services start where Marshal's would not.
	check("re-indented", bytes.ReplaceAll(data, []byte("\n    {"), []byte("\n     {")))
	c, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Marshal(); !bytes.Equal(again, data) {
		t.Error("Marshal(Parse(data)) != data")
	}
}
