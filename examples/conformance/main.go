// Command conformance is the handler plugin of the conformance service:
// the fixture tools that the official MCP conformance suite calls, with
// the content it checks. scripts/conformance serves it and runs the suite.
package main

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

// none is the request of the tools without parameters.
type none struct{}

func main() {
	plugins.Serve(handlers()...)
}

func handlers() []plugins.Handler {
	return []plugins.Handler{
		plugins.Handle("test_simple_text", func(context.Context, none) (*plugins.Result, error) {
			return plugins.Text(simpleText), nil
		}),
		plugins.Handle("test_image_content", func(context.Context, none) (*plugins.Result, error) {
			return plugins.NewResult(plugins.ImageContent(redPixelPNG(), "image/png")), nil
		}),
		plugins.Handle("test_audio_content", func(context.Context, none) (*plugins.Result, error) {
			return plugins.NewResult(plugins.AudioContent(silentWAV(), "audio/wav")), nil
		}),
		plugins.Handle("test_embedded_resource", func(context.Context, none) (*plugins.Result, error) {
			return plugins.NewResult(plugins.EmbeddedText(embeddedURI, "text/plain", embeddedText)), nil
		}),
		plugins.Handle("test_multiple_content_types", func(context.Context, none) (*plugins.Result, error) {
			return plugins.NewResult(
				plugins.TextContent(mixedText),
				plugins.ImageContent(redPixelPNG(), "image/png"),
				plugins.EmbeddedText(mixedResourceURI, "application/json", mixedResourceJSON),
			), nil
		}),
		plugins.Handle("test_error_handling", func(context.Context, none) (*plugins.Result, error) {
			return plugins.Errorf(errorText), nil
		}),
		plugins.Handle("test_tool_with_logging", func(ctx context.Context, _ none) (*plugins.Result, error) {
			for i, msg := range logMessages {
				if i > 0 {
					if err := sleep(ctx, step); err != nil {
						return nil, err
					}
				}
				plugins.Log(ctx, "info", msg)
			}
			return plugins.Text("Tool with logging executed successfully"), nil
		}),
		plugins.Handle("test_tool_with_progress", func(ctx context.Context, _ none) (*plugins.Result, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ctx, step); err != nil {
						return nil, err
					}
				}
				plugins.Progress(ctx, p, 100, "")
			}
			return plugins.Text("Tool with progress executed successfully"), nil
		}),
	}
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
