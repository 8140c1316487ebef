package main

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/internal/otelenv"
)

// startTracing starts the OTLP trace exporter that the OTEL_* environment
// configures (otelenv.Start), or nothing. A setting toolc cannot honour is
// a usage error, before anything is compiled or built.
func startTracing(e env, cmd string) (tp trace.TracerProvider, stop func(), err error) {
	tp, stopSDK, err := otelenv.Start(context.Background(), "toolc")
	if err != nil {
		return nil, func() {}, usagef("tracing: %v", err)
	}
	return tp, func() {
		if err := stopSDK(); err != nil {
			fmt.Fprintf(e.stderr, "toolc %s: tracing: sending the last spans: %v\n", cmd, err)
		}
	}, nil
}
