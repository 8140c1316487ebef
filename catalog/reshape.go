package catalog

import "slices"

// A Reshape is a keyword of a field that a target cannot express, so its
// projection states it in the field's description instead.
type Reshape struct {
	// Target names the target's dialect as a user knows it: "Gemini",
	// "OpenAI strict mode", "Anthropic strict mode" or "Bedrock strict
	// mode".
	Target string
	// Keyword is the JSON Schema keyword, such as "minLength".
	Keyword string
}

// Reshapes lists what the projections of a request field for the targets
// move into the description, with each tool in strict mode or not. It
// reads the same tables the projections use, so a warning and a
// projection never disagree. Targets that share a dialect (the two OpenAI
// formats) are listed once.
func (f *Field) Reshapes(targets []Target, strict bool) []Reshape {
	var out []Reshape
	var seen []string
	for _, t := range targets {
		label := DialectName(t, strict)
		if label == "" || slices.Contains(seen, label) {
			continue
		}
		seen = append(seen, label)
		d := dialectOf(t, strict)
		for _, key := range f.keywords() {
			if !d.takes(key, f) {
				out = append(out, Reshape{label, key})
			}
		}
	}
	return out
}

// DialectName names the dialect of target's projection in strict mode or
// not, as messages name it: "OpenAI strict mode", "Gemini". It is "" for
// a projection that keeps every keyword (MCP, and OpenAI, Anthropic and
// Bedrock outside strict mode).
func DialectName(target Target, strict bool) string {
	switch {
	case target == Gemini:
		return "Gemini"
	case !strict || target == MCP:
		return ""
	case target == OpenAIChat || target == OpenAIResponses:
		return "OpenAI strict mode"
	case target == Anthropic:
		return "Anthropic strict mode"
	case target == Bedrock:
		return "Bedrock strict mode"
	}
	return ""
}

// keywords lists the keywords a field sets, in projection order.
func (f *Field) keywords() []string {
	var ks []string
	add := func(set bool, key string) {
		if set {
			ks = append(ks, key)
		}
	}
	add(len(f.Enum) > 0, "enum")
	add(f.Default != nil, "default")
	add(f.Format != "", "format")
	add(f.Pattern != "", "pattern")
	add(f.MinLength != nil, "minLength")
	add(f.MaxLength != nil, "maxLength")
	add(f.Minimum != nil, "minimum")
	add(f.Maximum != nil, "maximum")
	add(f.ExclusiveMinimum != nil, "exclusiveMinimum")
	add(f.ExclusiveMaximum != nil, "exclusiveMaximum")
	add(f.MinItems != nil, "minItems")
	add(f.MaxItems != nil, "maxItems")
	add(f.UniqueItems, "uniqueItems")
	add(len(f.Examples) > 0, "examples")
	return ks
}
