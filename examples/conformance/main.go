// Command conformance is the handler plugin of the conformance service:
// the fixture tools that the official MCP conformance suite calls, with
// the content it checks. scripts/conformance serves it and runs the suite.
package main

//go:generate go run ../../cmd/toolc gen go .

import (
	"context"
	"time"

	"github.com/toolc/toolc/plugins"
)

// The texts and resources the suite's scenarios describe.
const (
	simpleText        = "This is a simple text response for testing."
	errorText         = "This tool intentionally returns an error for testing"
	embeddedURI       = "test://embedded-resource"
	embeddedText      = "This is an embedded resource content."
	mixedText         = "Multiple content types test:"
	mixedResourceURI  = "test://mixed-content-resource"
	mixedResourceJSON = `{"test":"data","value":123}`
)

// logMessages are the info lines test_tool_with_logging sends, in order.
var logMessages = []string{"Tool execution started", "Tool processing data", "Tool execution completed"}

// step is the pause between two log lines or progress notifications: the
// suite checks that several notifications arrive while a call runs.
var step = 50 * time.Millisecond

func main() {
	Serve(fixtures{})
}

// fixtures implements the contract's tools (Tools, in tools_gen.go). None
// has parameters or response fields, so each returns plain content.
type fixtures struct{}

func (fixtures) TestSimpleText(context.Context, TestSimpleTextRequest) (*plugins.Result, error) {
	return plugins.Text(simpleText), nil
}

func (fixtures) TestImageContent(context.Context, TestImageContentRequest) (*plugins.Result, error) {
	return plugins.NewResult(plugins.ImageContent(redPixelPNG(), "image/png")), nil
}

func (fixtures) TestAudioContent(context.Context, TestAudioContentRequest) (*plugins.Result, error) {
	return plugins.NewResult(plugins.AudioContent(silentWAV(), "audio/wav")), nil
}

func (fixtures) TestEmbeddedResource(context.Context, TestEmbeddedResourceRequest) (*plugins.Result, error) {
	return plugins.NewResult(plugins.EmbeddedText(embeddedURI, "text/plain", embeddedText)), nil
}

func (fixtures) TestMultipleContentTypes(context.Context, TestMultipleContentTypesRequest) (*plugins.Result, error) {
	return plugins.NewResult(
		plugins.TextContent(mixedText),
		plugins.ImageContent(redPixelPNG(), "image/png"),
		plugins.EmbeddedText(mixedResourceURI, "application/json", mixedResourceJSON),
	), nil
}

func (fixtures) TestErrorHandling(context.Context, TestErrorHandlingRequest) (*plugins.Result, error) {
	return plugins.Errorf(errorText), nil
}

func (fixtures) TestToolWithLogging(ctx context.Context, _ TestToolWithLoggingRequest) (*plugins.Result, error) {
	for i, msg := range logMessages {
		if i > 0 {
			if err := sleep(ctx, step); err != nil {
				return nil, err
			}
		}
		plugins.Log(ctx, "info", msg)
	}
	return plugins.Text("Tool with logging executed successfully"), nil
}

func (fixtures) TestToolWithProgress(ctx context.Context, _ TestToolWithProgressRequest) (*plugins.Result, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, step); err != nil {
				return nil, err
			}
		}
		plugins.Progress(ctx, p, 100, "")
	}
	return plugins.Text("Tool with progress executed successfully"), nil
}

// reconnectAfter is how long test_reconnection takes: past the
// --sse-poll-after of scripts/conformance, so that toolc closes the call's
// stream before the result, and within the 5 s the suite waits on the
// resumed stream.
var reconnectAfter = time.Second

func (fixtures) TestReconnection(ctx context.Context, _ TestReconnectionRequest) (*plugins.Result, error) {
	if err := sleep(ctx, reconnectAfter); err != nil {
		return nil, err
	}
	return plugins.Text("Reconnection test completed successfully"), nil
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
