package main

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/internal/otelenv"
)

// startTracing starts the OTLP trace exporter that the OTEL_* environment
// configures (see internal/otelenv for the switch), or nothing when the
// environment leaves tracing off: then the provider is nil, which is off
// for the runtime. A setting toolc cannot honour is a usage error, before
// anything is compiled or built. stop sends the spans still buffered; it
// is bounded, so that an exporter that cannot reach its collector does not
// hold up the exit.
func startTracing(e env, cmd string) (tp trace.TracerProvider, stop func(), err error) {
	sdk, err := otelenv.New(context.Background(), "toolc")
	if err != nil {
		return nil, func() {}, usagef("tracing: %v", err)
	}
	if sdk == nil {
		return nil, func() {}, nil
	}
	return sdk, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := sdk.Shutdown(ctx); err != nil {
			fmt.Fprintf(e.stderr, "toolc %s: tracing: sending the last spans: %v\n", cmd, err)
		}
	}, nil
}
