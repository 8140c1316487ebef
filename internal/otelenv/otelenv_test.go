package otelenv

import (
	"context"
	goruntime "runtime"
	"strings"
	"testing"
)

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{"nothing set", nil, false, ""},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, ""},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, ""},
		{"otlp, the default endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false, ""},
		{"disabled wins over everything", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"disabled false", map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"another service's endpoint only", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://x"}, false, ""},
		{"an unsupported exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, `OTEL_TRACES_EXPORTER="zipkin": toolc exports traces over OTLP only`},
		{"a list with otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp, console"}, false, `OTEL_TRACES_EXPORTER="otlp, console"`},
		{"http/protobuf", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, ""},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": toolc exports traces over OTLP/HTTP`},
		{"the traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, ""},
		{"a protocol without tracing", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, err := Enabled(func(k string) string { return tc.env[k] })
			if on != tc.on {
				t.Errorf("on = %t, want %t", on, tc.on)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
}

// TestNewOff: with nothing set, New makes no provider, and so no exporter
// and no goroutine of the batch processor.
func TestNewOff(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(k, "")
	}
	before := goruntime.NumGoroutine()
	tp, err := New(context.Background(), "toolc")
	if tp != nil || err != nil {
		t.Fatalf("New = %v, %v; want nothing", tp, err)
	}
	if after := goruntime.NumGoroutine(); after != before {
		t.Errorf("%d goroutines before New, %d after", before, after)
	}
}
