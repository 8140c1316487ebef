// Package otelenv starts OpenTelemetry tracing as the standard OTEL_*
// environment variables configure it, for toolc and for the handler
// plugins it launches, which inherit its environment and so decide the
// same way.
//
// Tracing is off unless the environment asks for it: OTEL_TRACES_EXPORTER
// names otlp, or, with OTEL_TRACES_EXPORTER unset, an OTLP endpoint is
// given (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off whatever
// else is set. The specification's default exporter is otlp; toolc's is
// none, so that a server nobody configured sends nothing anywhere and runs
// no exporter. Off, New returns nil and starts nothing.
//
// The rest is the OpenTelemetry SDK's and exporter's own reading of the
// environment: endpoint, headers, timeout, TLS, compression
// (OTEL_EXPORTER_OTLP_*), sampler (OTEL_TRACES_SAMPLER), batching
// (OTEL_BSP_*), and resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
package otelenv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Enabled reports whether the environment (read through getenv) turns
// tracing on. A value toolc cannot honour is an error that names the
// variable: another exporter than otlp, or another OTLP protocol than
// http/protobuf.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	on := false
	exporters := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if exporters == "" {
		on = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	for _, e := range strings.Split(exporters, ",") {
		switch e = strings.TrimSpace(e); e {
		case "":
		case "none":
			return false, nil
		case "otlp":
			on = true
		default:
			return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: toolc exports traces over OTLP only: set it to otlp, or to none", exporters)
		}
	}
	if !on {
		return false, nil
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, name = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	if protocol != "" && protocol != "http/protobuf" {
		return false, fmt.Errorf("%s=%q: toolc exports traces over OTLP/HTTP with protobuf only: set it to http/protobuf, or leave it unset", name, protocol)
	}
	return true, nil
}

// New returns a tracer provider that batches spans to the OTLP endpoint
// the environment names, or nil when the environment leaves tracing off.
// service is the service.name of the spans unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise. The caller shuts the provider
// down on its way out, which sends the spans still buffered.
func New(ctx context.Context, service string) (*sdktrace.TracerProvider, error) {
	on, err := Enabled(os.Getenv)
	if err != nil || !on {
		return nil, err
	}
	// The exporter reads OTEL_EXPORTER_OTLP_* itself; it connects lazily,
	// so an endpoint that is down costs an error line per failed batch,
	// not the start.
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	// Later options win: the environment's service name over service.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithProcessPID())
	if err != nil {
		return nil, fmt.Errorf("the trace resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// Start is New for a command: the provider is nil, which is off for the
// runtime, when the environment leaves tracing off. stop sends the spans
// still buffered; it is bounded, so that an exporter that cannot reach its
// collector does not hold up the exit.
func Start(ctx context.Context, service string) (tp trace.TracerProvider, stop func() error, err error) {
	sdk, err := New(ctx, service)
	if err != nil || sdk == nil {
		return nil, func() error { return nil }, err
	}
	return sdk, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return sdk.Shutdown(ctx)
	}, nil
}
