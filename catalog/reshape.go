package catalog

// A Reshape is a keyword of a field that a target cannot express, so its
// projection states it in the field's description instead.
type Reshape struct {
	// Target names the target as a user knows it: "OpenAI strict mode",
	// "Anthropic strict mode" or "Gemini".
	Target string
	// Keyword is the JSON Schema keyword, such as "minLength".
	Keyword string
}

// Reshapes lists what each target's projection of a request field moves
// into the description, given whether the tool is strict. It reads the
// same tables the projections use, so a warning and a projection never
// disagree.
func (f *Field) Reshapes(strict bool) []Reshape {
	type target struct {
		name string
		d    dialect
	}
	targets := []target{{"Gemini", geminiDialect}}
	if strict {
		targets = append(targets, target{"OpenAI strict mode", openAIDialect(true)}, target{"Anthropic strict mode", anthropicDialect(true)})
	}
	var out []Reshape
	for _, t := range targets {
		for _, key := range f.keywords() {
			if !t.d.has(key, f) {
				out = append(out, Reshape{t.name, key})
			}
		}
	}
	return out
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
