package compiler

import (
	"github.com/toolc/toolc/diag"
)

// freeFormRule warns on every free-form (type: "json") field: the model
// reads no schema for its value, only its description, so it must learn
// there what to send. Free-form is right for values that really are open,
// such as a query document, a JSON patch or a dashboard, and wrong for a
// shape that fields could state.
var freeFormRule = &Rule{
	ID:       "free-form",
	Doc:      "warns on a free-form (type: \"json\") field: the model gets no schema for its value, only its description",
	Severity: diag.Warning,
	Check: func(p *Pass) {
		for f := range p.fields() {
			t := f.node.get("type")
			if t == nil || t.kind != kString || t.str != "json" {
				continue
			}
			what := "a JSON value"
			if boolAt(f.node, "object") {
				what = "a JSON object"
			}
			p.reportf(t.pos, "%s is free-form, %s: the model gets no schema for it, only its description, so say there what it holds, with an example, or give it fields; "+
				"the strict modes and Gemini take it as a string that holds the JSON, which the runtime parses back", f.describe(), what)
		}
	},
}
