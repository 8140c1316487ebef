package main

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"image/png"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/toolc/toolc/plugins"
)

func TestContentTools(t *testing.T) {
	rt := serve(t, Handlers(fixtures{})...)
	for _, tc := range []struct {
		tool string
		want []plugins.Content
	}{
		{"test_simple_text", []plugins.Content{plugins.TextContent("This is a simple text response for testing.")}},
		{"test_image_content", []plugins.Content{plugins.ImageContent(redPixelPNG(), "image/png")}},
		{"test_audio_content", []plugins.Content{plugins.AudioContent(silentWAV(), "audio/wav")}},
		{"test_embedded_resource", []plugins.Content{plugins.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource content.")}},
		{"test_multiple_content_types", []plugins.Content{
			plugins.TextContent("Multiple content types test:"),
			plugins.ImageContent(redPixelPNG(), "image/png"),
			plugins.EmbeddedText("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
		}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			// The suite calls test_simple_text with no arguments at all.
			for _, args := range []string{"{}", ""} {
				res, _ := call(t, rt, tc.tool, args)
				if res.IsError {
					t.Fatalf("args %q: tool error %v", args, res.Content)
				}
				if !reflect.DeepEqual(res.Content, tc.want) {
					t.Errorf("args %q: content %+v, want %+v", args, res.Content, tc.want)
				}
			}
		})
	}
}

func TestErrorHandling(t *testing.T) {
	res, _ := call(t, serve(t, Handlers(fixtures{})...), "test_error_handling", "{}")
	if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "This tool intentionally returns an error for testing" {
		t.Errorf("= %+v, want the fixed tool error", res)
	}
}

func TestLogging(t *testing.T) {
	start := time.Now()
	res, events := call(t, serve(t, Handlers(fixtures{})...), "test_tool_with_logging", "{}")
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Errorf("result %+v, want one text block", res)
	}
	var got []string
	for _, ev := range events {
		if ev.Log == nil || ev.Log.Level != "info" {
			t.Fatalf("event %+v, want an info log line", ev)
		}
		got = append(got, ev.Log.Message)
	}
	want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
	if !slices.Equal(got, want) {
		t.Errorf("log lines %q, want %q", got, want)
	}
	if d := time.Since(start); d < 2*step {
		t.Errorf("the call took %v; the lines should be %v apart", d, step)
	}
}

func TestProgress(t *testing.T) {
	res, events := call(t, serve(t, Handlers(fixtures{})...), "test_tool_with_progress", "{}")
	if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Errorf("result %+v, want one text block", res)
	}
	var got []float64
	for _, ev := range events {
		if ev.Progress == nil || ev.Progress.Total != 100 {
			t.Fatalf("event %+v, want progress of 100", ev)
		}
		got = append(got, ev.Progress.Progress)
	}
	if want := []float64{0, 50, 100}; !slices.Equal(got, want) {
		t.Errorf("progress %v, want %v", got, want)
	}
}

func TestRedPixelPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(redPixelPNG()))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Fatalf("bounds %v, want 1x1", b)
	}
	if c := color.NRGBAModel.Convert(img.At(0, 0)); c != (color.NRGBA{R: 0xff, A: 0xff}) {
		t.Errorf("pixel %v, want opaque red", c)
	}
}

func TestSilentWAV(t *testing.T) {
	wav := silentWAV()
	var h struct {
		RIFF          [4]byte
		Size          uint32
		WAVE, Fmt     [4]byte
		FmtSize       uint32
		Format, Chans uint16
		Rate, ByteRt  uint32
		Align, Bits   uint16
		Data          [4]byte
		DataSize      uint32
	}
	if err := binary.Read(bytes.NewReader(wav), binary.LittleEndian, &h); err != nil {
		t.Fatal(err)
	}
	if string(h.RIFF[:]) != "RIFF" || string(h.WAVE[:]) != "WAVE" || string(h.Fmt[:]) != "fmt " || string(h.Data[:]) != "data" {
		t.Fatalf("chunk ids %q %q %q %q", h.RIFF, h.WAVE, h.Fmt, h.Data)
	}
	if int(h.Size) != len(wav)-8 || int(h.DataSize) != len(wav)-44 || h.DataSize == 0 {
		t.Errorf("sizes: RIFF %d, data %d, file %d bytes", h.Size, h.DataSize, len(wav))
	}
	if h.Format != 1 || h.Chans != 1 || h.ByteRt != h.Rate*uint32(h.Align) || h.Align != h.Chans*h.Bits/8 {
		t.Errorf("inconsistent PCM header %+v", h)
	}
}

func TestReconnection(t *testing.T) {
	defer func(d time.Duration) { reconnectAfter = d }(reconnectAfter)
	reconnectAfter = 20 * time.Millisecond
	start := time.Now()
	res, _ := call(t, serve(t, Handlers(fixtures{})...), "test_reconnection", "{}")
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "Reconnection test completed successfully" {
		t.Errorf("= %+v, want the fixed text", res)
	}
	if d := time.Since(start); d < reconnectAfter {
		t.Errorf("the call took %v, want at least %v", d, reconnectAfter)
	}
}
