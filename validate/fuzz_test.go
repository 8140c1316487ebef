package validate

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolc/toolc/catalog"
)

// FuzzValidate holds the validator to jsonschema/v6 on the MCP projection
// of representative requests: for arbitrary bytes, both must find the
// arguments valid or both invalid. A second input aims the fuzzer at one
// field at a time, which finds a wrong bound or format far sooner than
// mutating whole JSON texts does: this string goes to every format check of
// both, directly; quoted, to the string fields of the strings request
// (patterns, lengths, enum); and as it is, as raw JSON, to each field of
// each request in turn, the other required fields valid. Bytes that are not JSON are invalid to
// the reference; where the two deliberately differ, the reference is
// adjusted and the comments say why:
//   - empty input and null mean {} to both (MCP clients send no arguments
//     for a tool without fields);
//   - a key given twice is invalid to both (encoding/json keeps the last,
//     so a handler could see another value than the one checked).
//   - an integer beyond int64 or a number beyond float64 is invalid to
//     both (the handler's Go field could not hold it), and an integer is
//     judged by its value, so 0e99999999999999999999 is 0 to both: see
//     refRange.
//
// Inputs with a number whose exponent is beyond ±1000 are only run through
// the validator: jsonschema/v6 takes up to a second on each (math/big
// expands 10^999999), which would stall the fuzzer; TestValidateHugeExponents
// compares such numbers one by one.
//
// Inputs on which jsonschema/v6 panics are skipped (it panics on a number
// that math/big cannot read, exponent beyond ±1e6, under minimum or maximum;
// and on the email "a@["), and so are numbers that math/big cannot read in
// an array, which jsonschema/v6 finds unequal to themselves in uniqueItems.
//
// For valid arguments it also checks the output: the given fields
// unchanged, defaults for exactly the absent optional fields, compact JSON
// that validates again to itself.
func FuzzValidate(f *testing.F) {
	reqs := refRequests(f)
	slots := fuzzSlots(reqs)
	for i, s := range validateFuzzSeeds {
		f.Add([]byte(s), validateFuzzStrings[i%len(validateFuzzStrings)])
	}
	for _, v := range validateFuzzValues {
		f.Add([]byte(`{}`), v)
	}
	for _, values := range validateFormatCases {
		for _, v := range values {
			f.Add([]byte(`{}`), v)
		}
	}
	strs := reqs[1]
	formatRefs := refFormats(f)
	f.Fuzz(func(t *testing.T, args []byte, value string) {
		for name, ref := range formatRefs {
			if mine, theirs, ok := compareFormat(name, ref, value); ok && mine != theirs {
				t.Fatalf("format %s: verdicts differ on %q: toolc %v, jsonschema %v", name, value, mine, theirs)
			}
		}
		quoted, _ := json.Marshal(value)
		q := string(quoted)
		fuzzCompare(t, strs, []byte(`{"code":"ABC-1","name":`+q+`,"search":`+q+`,"color":`+q+`}`))
		if !refHugeExponentText(value) {
			for _, sl := range slots {
				fuzzCompare(t, sl.r, sl.args(value))
			}
		}
		slow := false
		if v, err := refDecode(args); err == nil {
			slow = refHugeExponent(v)
		}
		for _, r := range reqs {
			if slow {
				_, _ = r.v.Validate(args)
				continue
			}
			fuzzCompare(t, r, args)
		}
	})
}

// fuzzSlot is one field of one request, or of an item of one of its
// records, with valid values for the other required fields: the
// arguments are before, the value, and after.
type fuzzSlot struct {
	r             *refRequest
	before, after string
}

func (s fuzzSlot) args(raw string) []byte {
	return []byte(s.before + raw + s.after)
}

// fuzzValid are valid values for the required fields of the requests, and
// of the items of their records.
var fuzzValid = map[string]string{"city": `"Berlin"`, "code": `"ABC-1"`, "n": `1`, "ints": `[1,2]`,
	"path": `"a.txt"`, "edits": `[{"oldText":"a","newText":"b"}]`, "oldText": `"a"`, "newText": `"b"`, "text": `"a note"`,
	"query": `{}`}

func fuzzSlots(reqs []*refRequest) []fuzzSlot {
	var slots []fuzzSlot
	// others writes the required fields but f, each with its valid value.
	others := func(fields []*catalog.Field, f *catalog.Field) string {
		var b string
		for _, g := range fields {
			if g.Required && g != f {
				b += `"` + g.Name + `":` + fuzzValid[g.Name] + ","
			}
		}
		return b
	}
	for _, r := range reqs {
		for _, f := range r.msg.Fields {
			base := others(r.msg.Fields, f)
			slots = append(slots, fuzzSlot{r, "{" + base + `"` + f.Name + `":`, "}"})
			// Each field of a record's items, in the second of two items.
			for _, sub := range f.Fields {
				item := "{" + others(f.Fields, sub) + `"` + sub.Name + `":`
				slots = append(slots, fuzzSlot{r, "{" + base + `"` + f.Name + `":[{` + strings.TrimSuffix(others(f.Fields, nil), ",") + "}," + item, "}]}"})
			}
		}
	}
	return slots
}

// refHugeExponentText is refHugeExponent for any text: whether a number in
// it may have an exponent beyond ±1000.
func refHugeExponentText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' || s[i] == 'E' {
			j := i + 1
			for j < len(s) && (s[j] == '+' || s[j] == '-' || s[j] == '0') {
				j++
			}
			k := j
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k-j > 3 {
				return true
			}
		}
	}
	return false
}

// refFormats compiles a schema {"type": "string", "format": F} for every
// format, format assertions on.
func refFormats(tb testing.TB) map[string]*jsonschema.Schema {
	tb.Helper()
	out := map[string]*jsonschema.Schema{}
	for name := range stringFormats {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if err := c.AddResource("mem://format.json", map[string]any{"type": "string", "format": name}); err != nil {
			tb.Fatal(err)
		}
		sch, err := c.Compile("mem://format.json")
		if err != nil {
			tb.Fatal(err)
		}
		out[name] = sch
	}
	return out
}

// compareFormat runs one format check of both on s; ok is false when
// jsonschema/v6 panics.
func compareFormat(name string, ref *jsonschema.Schema, s string) (mine, theirs, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return stringFormats[name].check(s), ref.Validate(s) == nil, true
}

// fuzzCompare compares the verdicts on one input, and checks the output of
// valid arguments and the problems of invalid ones.
func fuzzCompare(t *testing.T, r *refRequest, args []byte) {
	t.Helper()
	out, err := r.v.Validate(args)
	ref, panicked := referenceVerdict(r, args)
	if panicked != nil {
		return
	}
	if (err == nil) != (ref == nil) {
		if v, derr := refDecode(args); derr == nil && refUnparsableInArray(v) {
			return
		}
		t.Fatalf("%s: verdicts differ on %q\n toolc:      %v\n jsonschema: %v\n schema: %s", r.name, args, err, ref, r.schema)
	}
	if err != nil {
		var verr *ValidationError
		if !errors.As(err, &verr) || len(verr.Problems) == 0 {
			t.Fatalf("%s: %q: error %v is not a ValidationError with problems", r.name, args, err)
		}
		var msgs []string
		for _, p := range verr.Problems {
			if p.Message == "" {
				t.Fatalf("%s: %q: a problem without a message", r.name, args)
			}
			msgs = append(msgs, p.Message)
		}
		if err.Error() != strings.Join(msgs, "; ") {
			t.Fatalf("%s: %q: Error() = %q, not the problems joined", r.name, args, err.Error())
		}
		if out != nil {
			t.Fatalf("%s: %q: output %q with an error", r.name, args, out)
		}
		return
	}
	checkValidOutput(t, r, args, out)
}

// validateFuzzValues start off the slot input: values at and beyond the
// bounds of the fields, of every type.
var validateFuzzValues = []string{
	`0`, `1`, `14`, `15`, `14.0`, `1.4e1`, `-0`, `99`, `100`, `99.99999999999999999`, `-1.5`, `-1.50000000000000000001`,
	`2.25`, `2.2500000000000000001`, `0.1`, `0.1000000000000000000001`, `1e-7`, `9.9999999999999999e-8`, `-1e-300`,
	`-9007199254740992`, `-9007199254740993`, `1e21`, `1000000000000000000001`, `5`, `8.0`, `4`, `true`, `false`,
	`null`, `""`, `"x"`, `[]`, `[1]`, `[1,1]`, `[1,1.0]`, `["a","b","a"]`, `[true,false]`, `[0.5,5e-1]`, `{}`, `[[1]]`,
	`"celsius"`, `"kelvin"`, `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]`,
	`{"oldText":"a","newText":"b"}`, `[{"oldText":"a","newText":"b"}]`, `[{"oldText":"","newText":"b","count":0}]`,
	`[{"text":"a b","at":null,"when":"2026-02-29"}]`, `[{},{}]`, `[null]`, `"exact"`, `"regex"`, `[1,2,2]`, `"2024-02-29"`,
	`"{}"`, `"{\"a\":1}"`, `"[1,2]"`, `" 7 "`, `"{"`, `{"a":{"b":[]}}`, `"\"x\""`,
}

// validateFuzzStrings start off the string input: a valid and an invalid
// value of each format, and the like.
var validateFuzzStrings = []string{
	"2026-05-01T09:30:00Z", "2026-05-01T23:59:60+01:00", "2024-02-29", "2026-02-29", "23:59:60Z", "09:30:00.5-02:00",
	"P1Y2M3DT4H5M6S", "P2W", "PT", "ada@example.com", "\"a b\"@[IPv6:::1]", "a@[", "api.example.com", "-a.example",
	"192.0.2.1", "+1.2.3.4", "2001:db8::1", "fe80::1%eth0", "123e4567-e89b-12d3-a456-426614174000",
	"https://example.com/a?b#c", "http://[::1", "//example.com", "ab", "émile", "xxabbbcxx", "αβ", "Ünïcode", "",
}

// validateFuzzSeeds start the fuzzer off on every keyword of every
// request. The files in testdata/fuzz/FuzzValidate add the inputs where the
// validator and jsonschema/v6 part ways on purpose or where jsonschema/v6
// fails, as regression tests, and any crasher the fuzzer finds.
var validateFuzzSeeds = []string{
	``, `null`, `{}`, ` { } `, `[]`, `"x"`, `1`, `{} {}`, `{"a":1,"a":2}`,
	// weather
	`{"city":"Berlin"}`,
	`{"city":"Berlin","days":null,"unit":null,"hours":null}`, `{"city":null}`, `{"hours":null,"city":"Berlin"}`,
	`{"ints":[1,2],"colors":["red","blue"],"levels":[1,3,3]}`, `{"ints":[1,2],"colors":["red","red"]}`, `{"ints":[1,2],"colors":["Red"],"levels":[0,1e0,4]}`,
	`{"city":"Berlin","days":2,"unit":"fahrenheit","hours":[0,6,12,18]}`,
	`{"city":"","days":0}`,
	`{"city":"Berlin","days":14.0}`,
	`{"city":"Berlin","days":1e1}`,
	`{"city":"Berlin","days":15}`,
	`{"city":"Berlin","days":-0}`,
	`{"city":"Berlin","unit":"kelvin"}`,
	`{"city":"Berlin","hours":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]}`,
	`{"city":"Berlin","hours":[1.5,"2",null,[],{}]}`,
	`{"cty":"Berlin"}`,
	`{"city":"Berlin","city":"Paris"}`,
	`{"city":"B\u00e9rlin\ud83d\ude00"}`,
	`{"city":"\ud800"}`,
	"{\"city\":\"\xff\xfe\"}",
	`{"city":null}`,
	`{"city":"Berlin","days":null}`,
	`{"city":"Berlin",}`,
	`{"city":"Berlin"`,
	`{"city":"Berlin"} x`,
	`{"city":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	// strings
	`{"code":"ABC-12"}`,
	`{"code":"ABC-12x"}`,
	`{"code":"abc-12","name":"a","search":"xxabbbcxx","color":"Ünïcode"}`,
	`{"code":"ABC-1","name":"émile","search":"αβ","color":"purple"}`,
	`{"code":"ABC-1","name":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}`,
	`{"code":"ABC-1","f_datetime":"2026-05-01T09:30:00Z","f_date":"2026-02-29","f_time":"23:59:60Z","f_duration":"P1Y2M3DT4H5M6S"}`,
	`{"code":"ABC-1","f_datetime":"2026-05-01 09:30:00Z","f_date":"2024-02-29","f_time":"12:00:00+01:00","f_duration":"PT"}`,
	`{"code":"ABC-1","f_email":"ada@example.com","f_hostname":"api.example.com","f_ipv4":"192.0.2.1","f_ipv6":"2001:db8::1"}`,
	`{"code":"ABC-1","f_email":"\"a b\"@[IPv6:::1]","f_hostname":"-bad.example","f_ipv4":"+1.2.3.4","f_ipv6":"fe80::1%eth0"}`,
	`{"code":"ABC-1","f_uuid":"123e4567-e89b-12d3-a456-426614174000","f_uri":"https://example.com/a?b#c"}`,
	`{"code":"ABC-1","f_uuid":"123e4567e89b12d3a456426614174000","f_uri":"//example.com/a","f_duration":"P2W"}`,
	`{"code":"ABC-1","f_uri":"http://[::1]:80/","f_email":"a@[1.2.3.4]","f_time":"00:00:60+00:01"}`,
	// numbers
	`{"n":1}`,
	`{"n":0,"x":-1.5,"y":0.1,"level":4}`,
	`{"n":99.0,"x":2.25,"y":0.10000000000000001,"level":8.0,"flag":false}`,
	`{"n":100,"x":2.250000000000000000001,"y":1e-1}`,
	`{"n":50,"big":-9007199254740993,"tiny":1e-7}`,
	`{"n":50,"big":-9007199254740994,"tiny":0.99999999e-7}`,
	`{"n":50,"big":1e21,"tiny":-1e-300}`,
	`{"n":50,"big":1000000000000000000001,"tiny":-1.0000000001e-300}`,
	`{"n":50,"any":1e400,"x":-0.0}`,
	`{"n":50,"any":-1E-400,"x":2.2e0}`,
	`{"n":1e1000001}`,
	`{"n":1e999999}`,
	`{"n":5e-1}`,
	`{"n":50,"flag":"true"}`,
	`{"n":50,"level":2,"flag":true,"y":0.5}`,
	// arrays
	`{"ints":[1,2]}`,
	`{"ints":[1,1.0]}`,
	`{"ints":[1,10e-1]}`,
	`{"ints":[1]}`,
	`{"ints":[1,2],"tags":[]}`,
	`{"ints":[1,2],"tags":["a","b","c","d"]}`,
	`{"ints":[1,2],"tags":["a","\u0061"]}`,
	`{"ints":[1,2],"nums":[0.5,5e-1]}`,
	`{"ints":[1,2],"nums":[0,-0,0.0]}`,
	`{"ints":[1,2],"flags":[true,false]}`,
	`{"ints":[1,2],"flags":[true,true]}`,
	`{"ints":[1,2],"flags":[true,false,true]}`,
	`{"ints":[1,2],"any":["x","x","x"]}`,
	`{"ints":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,1]}`,
	`{"ints":[1,2],"nums":[1e9999999,1e9999999]}`,
	`{"ints":[1,2],"nums":[1e99999999999999999999,1e99999999999999999998]}`,
	`{"ints":[1,2],"any":[1,2,3,4,5,6,7,8]}`,
	// records
	`{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y","count":null,"mode":null,"lines":null,"ratio":null}],"notes":null}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y","count":9,"mode":"regex","lines":[1,2,3],"ratio":0.5}],"notes":[{"text":"ok","at":3,"when":"2024-02-29"}]}`,
	`{"path":"a","edits":[]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"x","newText":"y"},{"oldText":"x","newText":"y"},{"oldText":"x","newText":"y"}]}`,
	`{"path":"a","edits":[{"oldText":"","newText":1,"count":0,"mode":"fuzzy","lines":[1,1],"ratio":0,"extra":true}]}`,
	`{"path":"a","edits":[{"newText":"y"},3,"x",null,[],{"oldText":"x","newText":"y","oldText":"z"}]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y","count":2.0,"ratio":1e-400}],"notes":[{"text":"Upper","when":"2026-02-29"}]}`,
	`{"path":"a","edits":{"oldText":"x","newText":"y"}}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y","lines":[[[[1]]]]}]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y"}],"notes":[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"},{"text":"e"},{"text":"F"},{"text":"G"}]}`,
	`{"path":"a","edits":[{"oldText":"x","newText":"y"}],"notes":[{"text":"a","meta":{"k":[1,{"v":null}]}},{"text":"b","meta":"{\"k\": 2}"},{"text":"c","meta":"[1]"}]}`,
	// free-form values
	`{"query":{"age":{"$gt":30}}}`,
	`{"query":"{\"age\":{\"$gt\":30}}"}`,
	`{"query":" {\"a\": [1, 2] } ","patch":"42"}`,
	`{"query":{ "a" : 1 , "b":[ ] },"patch":[1,{"a":null}]}`,
	`{"query":"[1]"}`,
	`{"query":[],"patch":"not json"}`,
	`{"query":null}`,
	`{"query":"","patch":""}`,
	`{"query":{},"patch":null,"note":"{}"}`,
	`{"query":{},"patch":"\"quoted\""}`,
	`{"query":{},"patch":"{\"a\":1,}"}`,
	`{"query":{"a":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}}`,
	`{"query":{"a":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}}`,
	`{"query":{},"patch":"` + strings.Repeat("[", 33) + strings.Repeat("]", 33) + `"}`,
	"{\"query\":{\"bad\":\"\xff\"},\"patch\":\"\\ud800\"}",
}

// refHugeExponent reports a number in v whose written exponent is beyond ±1000.
func refHugeExponent(v any) bool {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		i := strings.IndexAny(s, "eE")
		if i < 0 {
			return false
		}
		e := strings.TrimLeft(s[i+1:], "+-0")
		return len(e) > 3
	case []any:
		return slices.ContainsFunc(v, refHugeExponent)
	case map[string]any:
		for _, x := range v {
			if refHugeExponent(x) {
				return true
			}
		}
	}
	return false
}
