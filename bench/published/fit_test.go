package published_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolc/toolc/bench/published"
	"github.com/toolc/toolc/internal/doctext"
)

// shape is what a property of a published tool is, to the contract
// language.
type shape int

const (
	scalar      shape = iota // string, integer, number, boolean, or an enum
	scalarArray              // an array of scalars
	record                   // an array of flat objects: items: fields: {...}
	free                     // any JSON value, or an object of any properties: type: "json"
	nestedFlat               // one nested object of scalars
	mapOf                    // an object of any keys, all of one scalar type
	union                    // anyOf or oneOf with alternatives other than null
	deeper                   // anything else: records of records, arrays of arrays, nested objects of objects
)

// TestContractFit classifies every tool of the corpus by what the contract
// language needs to express it: scalars and arrays of scalars alone; with
// records; with records and free-form values (type: "json"). A tool fits
// when every property of its input schema does; a nullable property
// (["string", "null"], or anyOf a type and null) counts as its type, which
// a port writes as an optional field. The counts are the README's, which
// this test keeps equal.
func TestContractFit(t *testing.T) {
	servers, err := published.Load()
	if err != nil {
		t.Fatal(err)
	}
	tools, flat, withRecords, withJSON := 0, 0, 0, 0
	blockers := map[shape]int{}
	for _, s := range servers {
		for _, tl := range s.Tools {
			var root map[string]any
			if err := json.Unmarshal(tl.InputSchema, &root); err != nil {
				t.Fatalf("%s %s: %v", s.Package, tl.Name, err)
			}
			tools++
			worst := scalar
			props, _ := root["properties"].(map[string]any)
			for _, p := range props {
				worst = max(worst, classify(root, p, 0))
			}
			switch {
			case worst <= scalarArray:
				flat++
			case worst == record:
				withRecords++
			case worst == free:
				withJSON++
			default:
				blockers[worst]++
			}
		}
	}
	t.Logf("%d tools: %d fit with scalars and arrays of scalars, %d more with records, %d more with free-form values; the rest need a nested object (%d), a map (%d), a union (%d) or deeper nesting (%d)",
		tools, flat, withRecords, withJSON, blockers[nestedFlat], blockers[mapOf], blockers[union], blockers[deeper])
	readme, err := readREADME()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(readme), " ")
	for _, want := range []string{
		fitSentence(tools, len(servers), flat, withRecords),
		fmt.Sprintf("free-form values bring %d more tools (%.1f %%)", withJSON, 100*float64(flat+withRecords+withJSON)/float64(tools)),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not say, as it is now:\n%s", want)
		}
	}
}

// classify says what a property schema needs; depth counts the objects
// and arrays around it, of the tool's arguments.
func classify(root map[string]any, v any, depth int) shape {
	s, ok := v.(map[string]any)
	if !ok {
		return free // true: any value
	}
	s = resolve(root, s)
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, ok := s[k].([]any)
		if !ok {
			continue
		}
		var rest []any
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok && m["type"] == "null" {
				continue
			}
			rest = append(rest, a)
		}
		if len(rest) != 1 {
			if allScalarConsts(root, rest) {
				return scalar
			}
			return union
		}
		return classify(root, rest[0], depth)
	}
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
		return classify(root, all[0], depth)
	}
	typ := typeOf(s)
	switch typ {
	case "string", "integer", "number", "boolean":
		return scalar
	case "":
		if s["enum"] != nil || s["const"] != nil {
			return scalar
		}
		if _, ok := s["properties"]; ok {
			typ = "object"
		} else {
			return free
		}
	case "multi":
		return union
	}
	switch typ {
	case "array":
		items, ok := s["items"]
		if !ok {
			return free // an array of anything: a free-form value
		}
		switch k := classify(root, items, depth+1); {
		case k == scalar:
			return scalarArray
		case k == nestedFlat && depth == 0:
			return record
		case k == free:
			return free
		case k == union:
			return union
		}
		return deeper
	case "object":
		props, _ := s["properties"].(map[string]any)
		if len(props) == 0 {
			if ap, ok := s["additionalProperties"].(map[string]any); ok && len(ap) > 0 {
				if classify(root, ap, depth+1) == scalar {
					return mapOf
				}
			}
			return free
		}
		for _, p := range props {
			if k := classify(root, p, depth+1); k > scalarArray {
				return deeper
			}
		}
		return nestedFlat
	}
	return deeper
}

// typeOf is a schema's type: one name, "" for none, and "multi" for a list
// of several besides null.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		var names []string
		for _, x := range t {
			if x != "null" {
				names = append(names, x.(string))
			}
		}
		if len(names) == 1 {
			return names[0]
		}
		return "multi"
	}
	return ""
}

// allScalarConsts reports alternatives that are each a const or an enum:
// one enum.
func allScalarConsts(root map[string]any, alts []any) bool {
	for _, a := range alts {
		m, ok := a.(map[string]any)
		if !ok {
			return false
		}
		m = resolve(root, m)
		if m["const"] == nil && m["enum"] == nil {
			return false
		}
	}
	return len(alts) > 0
}

// resolve follows a local $ref ("#/definitions/x", "#/properties/a/items").
func resolve(root, s map[string]any) map[string]any {
	for range 10 {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return s
		}
		var cur any = root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				return s
			}
			cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		s = next
	}
	return s
}

// readREADME returns toolc's documentation, README.md and docs/*.md,
// which state the corpus's figures.
func readREADME() (string, error) {
	root, err := doctext.FindRoot(".")
	if err != nil {
		return "", err
	}
	d, err := doctext.Load(root)
	if err != nil {
		return "", err
	}
	return d.All(), nil
}

// fitSentence is the sentence on the corpus of docs/contract.md (whose
// link to this directory is relative to docs/).
func fitSentence(tools, servers, flat, records int) string {
	pct := func(n int) string { return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(tools)) }
	return fmt.Sprintf("Of the %d tools of %d published MCP servers in [bench/published](../bench/published), %d (%s) fit scalars and arrays of scalars, and records bring %d more (%s)",
		tools, servers, flat, pct(flat), records, pct(flat+records))
}
