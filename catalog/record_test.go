package catalog_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// TestRecordProjections pins how every target states a record field's
// items: a closed object with properties and required (OpenAI, Anthropic,
// Bedrock, MCP), strict mode's nullables and all-required inside it
// (OpenAI strict), the bounds strict mode lacks in the descriptions
// (Anthropic and Bedrock strict), and Gemini's dialect: no
// additionalProperties, nullable, propertyOrdering.
func TestRecordProjections(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "edit", Version: "1.0.0", Description: "d", Tools: []*catalog.Tool{{
		Name: "edit", Description: "Edit a file", Request: catalog.Message{Fields: []*catalog.Field{
			{Name: "edits", Type: catalog.Array, Items: catalog.Object, Description: "Edits", Required: true, MinItems: i64(2), Fields: []*catalog.Field{
				{Name: "oldText", Type: catalog.String, Description: "Find", Required: true, MinLength: i64(1)},
				{Name: "mode", Type: catalog.String, Description: "Match", Enum: []any{"exact", "regex"}},
			}},
		}},
	}}}}}
	const (
		open   = `{"type":"array","description":"Edits","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Find","minLength":1},"mode":{"type":"string","description":"Match","enum":["exact","regex"]}},"required":["oldText"],"additionalProperties":false},"minItems":2}`
		openAI = `{"type":"array","description":"Edits","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Find\n\n{minLength: 1}"},"mode":{"type":["string","null"],"description":"Match","enum":["exact","regex",null]}},"required":["oldText","mode"],"additionalProperties":false},"minItems":2}`
		claude = `{"type":"array","description":"Edits\n\n{minItems: 2}","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Find\n\n{minLength: 1}"},"mode":{"type":"string","description":"Match","enum":["exact","regex"]}},"required":["oldText"],"additionalProperties":false}}`
		gemini = `{"type":"ARRAY","description":"Edits","items":{"type":"OBJECT","properties":{"oldText":{"type":"STRING","description":"Find","minLength":1},"mode":{"type":"STRING","description":"Match","nullable":true,"enum":["exact","regex"]}},"required":["oldText"],"propertyOrdering":["oldText","mode"]},"minItems":2}`
	)
	for _, tc := range []struct {
		target catalog.Target
		strict bool
		want   string
	}{
		{catalog.OpenAIChat, false, open}, {catalog.OpenAIChat, true, openAI},
		{catalog.OpenAIResponses, false, open}, {catalog.OpenAIResponses, true, openAI},
		{catalog.Anthropic, false, open}, {catalog.Anthropic, true, claude},
		{catalog.Bedrock, false, open}, {catalog.Bedrock, true, claude},
		{catalog.Gemini, false, gemini}, {catalog.Gemini, true, gemini},
		{catalog.MCP, false, open}, {catalog.MCP, true, open},
	} {
		data, err := c.ProjectJSON(tc.target, catalog.ProjectOptions{Strict: tc.strict})
		if err != nil {
			t.Fatal(err)
		}
		// The compact projection holds the field exactly, keys in order.
		var got, want bytes.Buffer
		if err := json.Compact(&got, data); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&want, []byte(tc.want)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(got.Bytes(), append([]byte(`"edits":`), want.Bytes()...)) {
			t.Errorf("%s strict=%v: the projection\n%s\ndoes not hold\n%s", tc.target, tc.strict, got.Bytes(), want.Bytes())
		}
	}
}

// TestJSONProjections pins how every target states a free-form field: its
// value's schema where the target takes an open one (no type for any
// value, "object" for an object), and where it cannot (the strict modes,
// which close every object, and Gemini, which takes no type for any value
// and no object without properties) a string, described as holding the
// JSON, nullable when optional in OpenAI's strict mode, with its examples
// in the description.
func TestJSONProjections(t *testing.T) {
	c := &catalog.Catalog{Services: []*catalog.Service{{Name: "db", Version: "1.0.0", Description: "d", Tools: []*catalog.Tool{{
		Name: "find", Description: "Find documents", Request: catalog.Message{Fields: []*catalog.Field{
			{Name: "filter", Type: catalog.JSON, Object: true, Description: "A filter", Required: true, Examples: []any{map[string]any{"a": int64(1)}}},
			{Name: "patch", Type: catalog.JSON, Description: "A patch"},
		}},
	}}}}}
	const (
		open         = `"filter":{"type":"object","description":"A filter","examples":[{"a":1}]},"patch":{"description":"A patch"}`
		filterString = `"filter":{"type":"string","description":"A filter\n\nA JSON object, sent as a string that holds its JSON text, such as \"{\\\"key\\\": 1}\".\n\n{examples: [{\"a\":1}]}"}`
		patchNote    = `"description":"A patch\n\nA JSON value, sent as a string that holds its JSON text."`
		openAI       = filterString + `,"patch":{"type":["string","null"],` + patchNote + `}`
		claude       = filterString + `,"patch":{"type":"string",` + patchNote + `}`
		gemini       = `"filter":{"type":"STRING","description":"A filter\n\nA JSON object, sent as a string that holds its JSON text, such as \"{\\\"key\\\": 1}\".\n\n{examples: [{\"a\":1}]}"},"patch":{"type":"STRING",` + patchNote + `,"nullable":true}`
	)
	for _, tc := range []struct {
		target catalog.Target
		strict bool
		want   string
	}{
		{catalog.OpenAIChat, false, open}, {catalog.OpenAIChat, true, openAI},
		{catalog.OpenAIResponses, false, open}, {catalog.OpenAIResponses, true, openAI},
		{catalog.Anthropic, false, open}, {catalog.Anthropic, true, claude},
		{catalog.Bedrock, false, open}, {catalog.Bedrock, true, claude},
		{catalog.Gemini, false, gemini}, {catalog.Gemini, true, gemini},
		{catalog.MCP, false, open}, {catalog.MCP, true, open},
	} {
		data, err := c.ProjectJSON(tc.target, catalog.ProjectOptions{Strict: tc.strict})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Compact(&got, data); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(got.Bytes(), []byte(`"properties":{`+tc.want+`}`)) {
			t.Errorf("%s strict=%v: the projection\n%s\ndoes not hold\n%s", tc.target, tc.strict, got.Bytes(), tc.want)
		}
	}
}
