package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	brdocument "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/toolc/toolc/bench/corpus"
	"github.com/toolc/toolc/catalog"
)

// TestSDKRoundTrip decodes every element of the OpenAI and Anthropic
// projections into the official Go SDKs' tool param types, encodes it
// again, and requires the same JSON: the projection is exactly what the
// SDKs send, and no field is one that they would drop.
func TestSDKRoundTrip(t *testing.T) {
	decoders := map[catalog.Target]func(data []byte) (any, error){
		catalog.OpenAIChat: func(data []byte) (any, error) {
			var u openai.ChatCompletionToolUnionParam
			if err := json.Unmarshal(data, &u); err != nil {
				return nil, err
			}
			if u.OfFunction == nil || u.GetFunction().Name == "" {
				return nil, fmt.Errorf("not a function tool: %+v", u)
			}
			return u, nil
		},
		catalog.OpenAIResponses: func(data []byte) (any, error) {
			var u responses.ToolUnionParam
			if err := json.Unmarshal(data, &u); err != nil {
				return nil, err
			}
			switch {
			case u.OfNamespace != nil:
				if u.OfNamespace.Name == "" || len(u.OfNamespace.Tools) == 0 {
					return nil, fmt.Errorf("an empty namespace: %+v", u)
				}
			case u.OfToolSearch != nil:
			case u.OfFunction == nil || u.OfFunction.Name == "" || u.OfFunction.Parameters == nil:
				return nil, fmt.Errorf("not a function tool: %+v", u)
			}
			return u, nil
		},
		catalog.Anthropic: func(data []byte) (any, error) {
			var u anthropic.ToolUnionParam
			if err := json.Unmarshal(data, &u); err != nil {
				return nil, err
			}
			if u.OfToolSearchToolBm25_20251119 != nil {
				return u, nil
			}
			if u.OfTool == nil || u.OfTool.Name == "" || u.OfTool.InputSchema.Properties == nil {
				return nil, fmt.Errorf("not a custom tool: %+v", u)
			}
			return u, nil
		},
	}
	for _, ex := range sdkCorpus(t) {
		for target, decode := range decoders {
			for _, m := range modes {
				t.Run(ex.name+"/"+string(target)+m.suffix, func(t *testing.T) {
					data, err := ex.cat.ProjectJSON(target, m.opts)
					if err != nil {
						t.Fatal(err)
					}
					var elems []json.RawMessage
					if err := json.Unmarshal(data, &elems); err != nil {
						t.Fatal(err)
					}
					if len(elems) == 0 {
						t.Fatal("empty projection")
					}
					for _, elem := range elems {
						v, err := decode(elem)
						if err != nil {
							t.Fatalf("decoding %s: %v", elem, err)
						}
						again, err := json.Marshal(v)
						if err != nil {
							t.Fatal(err)
						}
						if diff := jsonDiff(elem, again); diff != "" {
							t.Errorf("the SDK type does not re-encode the element as it was: %s\nprojected: %s\nre-encoded: %s", diff, compact(elem), again)
						}
					}
				})
			}
		}
	}
}

// TestSDKRoundTripCatchesLoss makes sure that the comparison above can
// fail: a key that the SDK type has no place for is lost.
func TestSDKRoundTripCatchesLoss(t *testing.T) {
	elem := []byte(`{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}},"strict":false,"not_a_field":1}}`)
	var u openai.ChatCompletionToolUnionParam
	if err := json.Unmarshal(elem, &u); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if jsonDiff(elem, again) == "" {
		t.Errorf("the SDK kept an unknown key (%s): TestSDKRoundTrip can no longer see a lost field; compare against the SDK's known fields instead", again)
	}
}

// jsonDiff compares two JSON texts as values and describes the first
// difference, or returns "".
func jsonDiff(a, b []byte) string {
	var x, y any
	for _, p := range []struct {
		data []byte
		v    *any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.UseNumber()
		if err := dec.Decode(p.v); err != nil {
			return err.Error()
		}
	}
	return valueDiff("$", x, y)
}

func valueDiff(path string, x, y any) string {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v became %v", path, x, y)
		}
		for k, v := range xv {
			w, ok := yv[k]
			if !ok {
				return fmt.Sprintf("%s.%s was lost", path, k)
			}
			if d := valueDiff(path+"."+k, v, w); d != "" {
				return d
			}
		}
		for k := range yv {
			if _, ok := xv[k]; !ok {
				return fmt.Sprintf("%s.%s was added", path, k)
			}
		}
		return ""
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return fmt.Sprintf("%s: %v became %v", path, x, y)
		}
		for i := range xv {
			if d := valueDiff(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(x, y) {
		return fmt.Sprintf("%s: %v became %v", path, x, y)
	}
	return ""
}

func compact(data []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return string(data)
	}
	return b.String()
}

// TestGeminiSDKRoundTrip decodes the Gemini projection into
// google.golang.org/genai's Tool (FunctionDeclaration, Schema), refusing
// unknown fields, and requires the same JSON when it is encoded again: the
// projection says nothing that the SDK would drop.
func TestGeminiSDKRoundTrip(t *testing.T) {
	for _, ex := range sdkCorpus(t) {
		for _, m := range modes {
			data, err := ex.cat.ProjectJSON(catalog.Gemini, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			var tools []*genai.Tool
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&tools); err != nil {
				t.Fatalf("%s gemini%s: decoding into genai.Tool: %v", ex.name, m.suffix, err)
			}
			if len(tools) != 1 || len(tools[0].FunctionDeclarations) != loadedTools(ex.cat) {
				t.Fatalf("%s gemini%s: %d tools", ex.name, m.suffix, len(tools))
			}
			for _, fd := range tools[0].FunctionDeclarations {
				if p := fd.Parameters; p != nil && len(p.PropertyOrdering) != len(p.Properties) {
					t.Errorf("%s gemini%s %s: propertyOrdering %v for %d properties", ex.name, m.suffix, fd.Name, p.PropertyOrdering, len(p.Properties))
				}
			}
			again, err := json.Marshal(tools)
			if err != nil {
				t.Fatal(err)
			}
			if diff := jsonDiff(data, again); diff != "" {
				t.Errorf("%s gemini%s: genai does not re-encode the projection as it was: %s", ex.name, m.suffix, diff)
			}
		}
	}
}

// TestBedrockSDKRoundTrip builds aws-sdk-go-v2's bedrockruntime
// types.ToolSpecification from each element of the Bedrock projection, its
// input schema as the SDK's document type holds it, and requires that what
// the SDK carries is the projection: every key of the element has a place
// in the SDK's type (unknown keys are refused), and the document marshals
// back to the same schema.
func TestBedrockSDKRoundTrip(t *testing.T) {
	for _, ex := range sdkCorpus(t) {
		for _, m := range modes {
			data, err := ex.cat.ProjectJSON(catalog.Bedrock, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			var elems []json.RawMessage
			if err := json.Unmarshal(data, &elems); err != nil {
				t.Fatal(err)
			}
			for _, elem := range elems {
				// The keys of types.Tool's ToolSpec member and of
				// types.ToolSpecification, which has no JSON tags.
				var wire struct {
					ToolSpec struct {
						Name        *string `json:"name"`
						Description *string `json:"description"`
						InputSchema struct {
							JSON map[string]any `json:"json"`
						} `json:"inputSchema"`
						Strict *bool `json:"strict"`
					} `json:"toolSpec"`
				}
				dec := json.NewDecoder(bytes.NewReader(elem))
				dec.DisallowUnknownFields()
				// Numbers as float64: the document marshaler writes a
				// json.Number as a string.
				if err := dec.Decode(&wire); err != nil {
					t.Fatalf("%s bedrock%s: %v in %s", ex.name, m.suffix, err, elem)
				}
				spec := wire.ToolSpec
				var tool brtypes.Tool = &brtypes.ToolMemberToolSpec{Value: brtypes.ToolSpecification{
					Name:        spec.Name,
					Description: spec.Description,
					Strict:      spec.Strict,
					InputSchema: &brtypes.ToolInputSchemaMemberJson{Value: brdocument.NewLazyDocument(spec.InputSchema.JSON)},
				}}
				got := tool.(*brtypes.ToolMemberToolSpec).Value
				schema, err := got.InputSchema.(*brtypes.ToolInputSchemaMemberJson).Value.MarshalSmithyDocument()
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]any{"name": *got.Name, "inputSchema": map[string]any{"json": json.RawMessage(schema)}}
				if got.Description != nil {
					out["description"] = *got.Description
				}
				if got.Strict != nil {
					out["strict"] = *got.Strict
				}
				again, _ := json.Marshal(map[string]any{"toolSpec": out})
				if diff := jsonDiff(elem, again); diff != "" {
					t.Errorf("%s bedrock%s: the SDK's ToolSpecification does not carry the element as it was: %s", ex.name, m.suffix, diff)
				}
			}
		}
	}
}

var (
	sdkOnce    sync.Once
	sdkList    []example
	sdkListErr error
)

// sdkCorpus is what the SDK round trips run on: the examples, a generated
// corpus of 200 tools (bench/corpus: every field type, bounds, enums,
// defaults, examples, formats, deprecations), and catalogs that set every
// keyword the contract language has, multi-selects included, strict and
// not.
func sdkCorpus(t *testing.T) []example {
	t.Helper()
	sdkOnce.Do(func() {
		sdkList = append(sdkList, examples(t)...)
		dir, err := os.MkdirTemp("", "toolc-sdk-corpus-")
		if err != nil {
			sdkListErr = err
			return
		}
		defer os.RemoveAll(dir)
		if _, err := corpus.Write(dir, corpus.ForTools(200)); err != nil {
			sdkListErr = err
			return
		}
		cat, err := compileDir(dir, "./...")
		if err != nil {
			sdkListErr = err
			return
		}
		sdkList = append(sdkList, example{"corpus", cat}, example{"kitchen sink", kitchenSink()}, example{"every keyword", everyKeyword()}, example{"deferred", deferredCatalog()})
	})
	if sdkListErr != nil {
		t.Fatal(sdkListErr)
	}
	return sdkList
}

// everyKeyword is a catalog whose fields set every keyword of the
// contract language, each on a field it fits, in a strict tool and in one
// that is not.
func everyKeyword() *catalog.Catalog {
	i64 := func(n int64) *int64 { return &n }
	f64 := func(x float64) *float64 { return &x }
	fields := func() []*catalog.Field {
		return []*catalog.Field{
			{Name: "s", Type: catalog.String, Description: "A <string> & more", Required: true, MinLength: i64(1), MaxLength: i64(9), Pattern: "^[a-z]+$", Examples: []any{"abc"}},
			{Name: "when", Type: catalog.String, Description: "A time", Format: "date-time", Default: "2030-01-01T00:00:00Z"},
			{Name: "site", Type: catalog.String, Description: "A URI", Format: "uri"},
			{Name: "mode", Type: catalog.String, Description: "A mode", Enum: []any{"fast", "slow"}, Default: "fast", Deprecated: true},
			{Name: "level", Type: catalog.Integer, Description: "A level", Enum: []any{int64(1), int64(2)}, Required: true},
			{Name: "n", Type: catalog.Integer, Description: "A count", Minimum: f64(1), Maximum: f64(10), Default: int64(2)},
			{Name: "x", Type: catalog.Number, Description: "A ratio", ExclusiveMinimum: f64(0), ExclusiveMaximum: f64(1.5)},
			{Name: "ok", Type: catalog.Boolean, Description: "A flag", Default: true},
			{Name: "tags", Type: catalog.Array, Items: catalog.String, Description: "Tags", MinItems: i64(1), MaxItems: i64(3), UniqueItems: true},
			{Name: "labels", Type: catalog.Array, Items: catalog.String, Description: "Labels", Enum: []any{"bug", "idea"}, Default: []any{"bug"}},
			{Name: "grades", Type: catalog.Array, Items: catalog.Integer, Description: "Grades", Enum: []any{int64(1), int64(2)}},
			{Name: "xs", Type: catalog.Array, Items: catalog.Number, Description: "Numbers", MinItems: i64(2)},
			{Name: "bs", Type: catalog.Array, Items: catalog.Boolean, Description: "Flags"},
			// A record, with every keyword on its items' fields.
			{Name: "edits", Type: catalog.Array, Items: catalog.Object, Description: "Edits", Required: true, MinItems: i64(1), MaxItems: i64(5), Fields: []*catalog.Field{
				{Name: "oldText", Type: catalog.String, Description: "Text to find", Required: true, MinLength: i64(1), Pattern: "^[^\n]+$", Examples: []any{"foo"}},
				{Name: "when", Type: catalog.String, Description: "A date", Format: "date"},
				{Name: "mode", Type: catalog.String, Description: "Match mode", Enum: []any{"exact", "regex"}, Default: "exact"},
				{Name: "count", Type: catalog.Integer, Description: "How many", Minimum: f64(1), ExclusiveMaximum: f64(100), Default: int64(1)},
				{Name: "level", Type: catalog.Integer, Description: "A level", Enum: []any{int64(1), int64(2)}},
				{Name: "ratio", Type: catalog.Number, Description: "A ratio", Maximum: f64(1.5)},
				{Name: "ok", Type: catalog.Boolean, Description: "A flag", Required: true},
				{Name: "lines", Type: catalog.Array, Items: catalog.Integer, Description: "Lines", UniqueItems: true, MaxItems: i64(3)},
				{Name: "tags", Type: catalog.Array, Items: catalog.String, Description: "Tags", Enum: []any{"a", "b"}, Deprecated: true},
			}},
			{Name: "notes", Type: catalog.Array, Items: catalog.Object, Description: "Optional notes", Fields: []*catalog.Field{
				{Name: "text", Type: catalog.String, Description: "A note", Required: true},
				{Name: "meta", Type: catalog.JSON, Description: "Anything"},
			}},
			// Free-form values: an object, required, with an example; any
			// value, optional.
			{Name: "filter", Type: catalog.JSON, Object: true, Description: "A query filter", Required: true, Examples: []any{map[string]any{"age": map[string]any{"$gt": int64(30)}}}},
			{Name: "patch", Type: catalog.JSON, Description: "A JSON patch", Deprecated: true},
		}
	}
	yes := true
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "every", Version: "1.0.0", Description: "d", Tools: []*catalog.Tool{
		{Name: "loose", Description: "Every keyword", Title: "Loose", Annotations: catalog.Annotations{ReadOnly: &yes},
			Request: catalog.Message{Description: "Args", Fields: fields()},
			Response: &catalog.Message{Fields: []*catalog.Field{{Name: "r", Type: catalog.String, Description: "R", Required: true},
				{Name: "rows", Type: catalog.Array, Items: catalog.Object, Description: "Rows", Required: true, Fields: []*catalog.Field{
					{Name: "id", Type: catalog.Integer, Description: "Id", Required: true},
					{Name: "label", Type: catalog.String, Description: "Label"},
				}}}}},
		{Name: "strict-one", Description: "Every keyword, strict", Strict: true, Deprecated: true, Request: catalog.Message{Fields: fields()},
			Examples: []map[string]any{{"s": "abc", "level": int64(1), "edits": []any{map[string]any{"oldText": "a", "ok": true, "count": int64(2)}}, "filter": map[string]any{"a": []any{int64(1), nil}}}}},
		{Name: "none", Description: "No arguments", Request: catalog.Message{Fields: []*catalog.Field{}}},
	}}}}
	c.Seal()
	return c
}

// deferredCatalog has groups and deferred tools: a deferred group, a group
// loaded up front whose tool defers itself, and tools of no group, one of
// them deferred.
func deferredCatalog() *catalog.Catalog {
	field := func(name string) []*catalog.Field {
		return []*catalog.Field{{Name: name, Type: catalog.String, Description: "The " + name, Required: true}}
	}
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "shop", Version: "1.0.0", Description: "A shop",
		Groups: []*catalog.Group{{Name: "billing", Description: "Invoices and refunds", Deferred: true}, {Name: "catalog", Description: "Products"}},
		Tools: []*catalog.Tool{
			{Name: "ping", Description: "Check that the shop answers", Request: catalog.Message{Fields: []*catalog.Field{}}},
			{Name: "invoice", Group: "billing", Deferred: true, Description: "Create an invoice for an order", Request: catalog.Message{Fields: field("order_id")}},
			{Name: "find_products", Group: "catalog", Description: "Find products by name", Request: catalog.Message{Fields: field("query")}},
			{Name: "refund", Group: "billing", Deferred: true, Description: "Refund a payment", Strict: true, Request: catalog.Message{Fields: field("payment_id")},
				Examples: []map[string]any{{"payment_id": "pay_1"}}},
			{Name: "price_history", Group: "catalog", Deferred: true, Description: "A product's prices over time", Request: catalog.Message{Fields: field("sku")}},
			{Name: "archive", Deferred: true, Description: "Archive an order", Request: catalog.Message{Fields: field("order_id")}},
		},
	}}}
	c.Seal()
	return c
}

// loadedTools is the number of function declarations of a target without
// deferred loading: the tools loaded up front, and toolc's search and call
// tools when some are deferred.
func loadedTools(c *catalog.Catalog) int {
	n, deferred := 0, false
	for _, t := range c.Tools() {
		if t.Deferred {
			deferred = true
		} else {
			n++
		}
	}
	if deferred {
		n += 2
	}
	return n
}
