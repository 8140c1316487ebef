package validate

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateBenchArgs are a typical valid and invalid call of the weather
// tool's query_weather. With message set, an invalid call's benchmark also
// renders the error's text (err.Error()), as the runtime does for the tool
// error: jsonschema/v6 renders its messages only then, the validator as it
// finds the problems.
var validateBenchArgs = []struct {
	name, args string
	message    bool
}{
	{"valid", `{"city":"Berlin","days":5,"unit":"fahrenheit","hours":[6,9,12,15,18]}`, false},
	{"invalid", `{"city":"","days":20,"unit":"kelvin","hours":[6,"9",12]}`, false},
	{"invalid+message", `{"city":"","days":20,"unit":"kelvin","hours":[6,"9",12]}`, true},
}

// BenchmarkValidate compares the validator with jsonschema/v6 on the MCP
// projection of the same request, in the same run:
//   - toolc: Validate, from the bytes to the output with defaults;
//   - jsonschema: decode the bytes (jsonschema.UnmarshalJSON, as a server
//     must) and validate;
//   - jsonschema-predecoded: validate a value decoded before the timer,
//     which leaves jsonschema/v6 its validation alone.
//
// Besides the wall time (ns/op) each reports the process's CPU time per
// call (cpu-ns/op), which a busy machine disturbs less.
func BenchmarkValidate(b *testing.B) {
	msg := valWeatherRequest()
	v, err := NewValidator(msg)
	if err != nil {
		b.Fatal(err)
	}
	_, sch := compileReference(b, msg)
	for _, a := range validateBenchArgs {
		args := []byte(a.args)
		_, mine := v.Validate(args)
		if ref := sch.Validate(refMustDecode(b, args)); (mine == nil) != (ref == nil) {
			b.Fatalf("%s: verdicts differ: %v, %v", a.name, mine, ref)
		}
		var text string
		b.Run("toolc/"+a.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := v.Validate(args); err != nil && a.message {
					text = err.Error()
				}
			}
		})
		b.Run("jsonschema/"+a.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			defer reportCPU(b)()
			for b.Loop() {
				x, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
				if err != nil {
					b.Fatal(err)
				}
				if err := sch.Validate(x); err != nil && a.message {
					text = err.Error()
				}
			}
		})
		b.Run("jsonschema-predecoded/"+a.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(args)))
			x := refMustDecode(b, args)
			defer reportCPU(b)()
			for b.Loop() {
				if err := sch.Validate(x); err != nil && a.message {
					text = err.Error()
				}
			}
		})
		_ = text
	}
}

// reportCPU reports the process's CPU time per iteration as cpu-ns/op,
// garbage collection included: call it before the loop and defer what it
// returns.
func reportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		if end, ok2 := processCPU(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func refMustDecode(tb testing.TB, args []byte) any {
	tb.Helper()
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		tb.Fatal(err)
	}
	return x
}
