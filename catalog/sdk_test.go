package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

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
			if u.OfFunction == nil || u.OfFunction.Name == "" || u.OfFunction.Parameters == nil {
				return nil, fmt.Errorf("not a function tool: %+v", u)
			}
			return u, nil
		},
		catalog.Anthropic: func(data []byte) (any, error) {
			var u anthropic.ToolUnionParam
			if err := json.Unmarshal(data, &u); err != nil {
				return nil, err
			}
			if u.OfTool == nil || u.OfTool.Name == "" || u.OfTool.InputSchema.Properties == nil {
				return nil, fmt.Errorf("not a custom tool: %+v", u)
			}
			return u, nil
		},
	}
	for _, ex := range examples(t) {
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
