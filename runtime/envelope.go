package runtime

import "github.com/toolc/toolc/catalog"

// NewEnvelopeValidator checks the body of POST /v1/call with the scanner
// that checks arguments, so that the envelope is read exactly as they are:
// keys case-sensitive and compared after their escapes are decoded
// ("na\u006de" is "name"), a key given twice refused, unknown keys
// refused (with the key meant, for "NAME"), nesting bounded, nothing after
// the object. encoding/json alone would match "NAME" to name and keep the
// last of two, so that a gateway that allowlists by name could be
// bypassed with {"name":"ping","NAME":"other"}.
//
// A name is at most MaxCallName bytes: tool and MCP names are at most 64,
// and an unknown name is quoted in the 404, which must not echo
// megabytes.
//
// It is here, not in httpapi, only while the validator has no option for
// a field that holds raw JSON: it sets the validator's fields itself.
func NewEnvelopeValidator() *Validator {
	one, most := int64(1), int64(MaxCallName)
	v, err := NewValidator(&catalog.Message{Fields: []*catalog.Field{
		{Name: "name", Type: catalog.String, Required: true, MinLength: &one, MaxLength: &most, Description: "the tool to call"},
		{Name: "arguments", Type: catalog.String, Description: "an object, or a JSON string holding one"},
	}})
	if err != nil {
		panic(err) // a constant message
	}
	args := v.fields[v.byName["arguments"]]
	args.t, args.kindText = kindJSON, "an object, or a JSON string holding one"
	args.compileMessages()
	v.whole, v.wholeIs = "the body", "is"
	return v
}
