// Command toolbox is the plugin the tests start: one tool per behaviour of
// the SDK that crosses the process boundary.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/plugins/rpc"
)

type echoReq struct {
	Message string   `json:"message"`
	Count   int      `json:"count"`
	Tags    []string `json:"tags"`
	Inner   *struct {
		Flag bool `json:"flag"`
	} `json:"inner"`
}

func main() {
	rpc.Serve(
		plugins.Handle("echo", func(ctx context.Context, req echoReq) (*plugins.Result, error) {
			return plugins.JSON(map[string]any{"req": req, "call_id": plugins.CallID(ctx)})
		}),
		plugins.Handle("ask", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			// Three questions in one round; the handler returns the
			// first error, and the call ends with every question asked.
			form := plugins.Form{Message: "Your name?", Schema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
			who, err1 := plugins.Elicit(ctx, "name", form)
			poem, err2 := plugins.Sample(ctx, "poem", plugins.SampleRequest{Messages: []plugins.SamplingMessage{plugins.UserText("A haiku")}, MaxTokens: 20})
			roots, err3 := plugins.Roots(ctx, "dirs")
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, err
			}
			var v struct{ Name string }
			if err := who.Decode(&v); err != nil {
				return nil, err
			}
			return plugins.Text(fmt.Sprintf("name=%s poem=%s roots=%d %s", v.Name, poem.Text(), len(roots), roots[0].URI)), nil
		}),
		plugins.Handle("caller", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			c, ok := plugins.CallerOf(ctx)
			if !ok {
				return plugins.Text("no caller"), nil
			}
			return plugins.JSON(c)
		}),
		plugins.HandlePrompt("greet", func(_ context.Context, args struct{ Name string }) ([]plugins.PromptMessage, error) {
			return []plugins.PromptMessage{
				{Role: "user", Content: plugins.TextContent("Greet " + args.Name)},
				{Role: "assistant", Content: plugins.ImageContent([]byte{1, 2}, "image/png")},
			}, nil
		}),
		plugins.HandleResource("page", func(_ context.Context, req plugins.ResourceRequest[struct{ Name string }]) ([]plugins.ResourceContents, error) {
			return []plugins.ResourceContents{{MIMEType: "text/plain", Text: "page " + req.Variables.Name}}, nil
		}),
		plugins.Handle("say", func(_ context.Context, req struct{ Message string }) (*plugins.Result, error) {
			return plugins.Text(req.Message), nil
		}),
		plugins.Handle("contents", func(context.Context, struct{}) (*plugins.Result, error) {
			size := int64(42)
			link := plugins.ResourceLink("file:///report.pdf", "report.pdf")
			link.Title, link.Description, link.MIMEType, link.Size = "Report", "The report", "application/pdf", &size
			return plugins.NewResult(
				plugins.TextContent("hello"),
				plugins.ImageContent([]byte{0x89, 'P', 'N', 'G', 0}, "image/png"),
				plugins.AudioContent([]byte{'R', 'I', 'F', 'F', 0xff}, "audio/wav"),
				link,
				plugins.EmbeddedText("mem://notes.txt", "text/plain", "some notes"),
				plugins.EmbeddedBlob("mem://blob.bin", "application/octet-stream", []byte{0, 1, 2, 255}),
				plugins.EmbeddedBlob("mem://empty.bin", "application/octet-stream", nil),
			), nil
		}),
		plugins.Handle("fail", func(_ context.Context, req struct{ City string }) (*plugins.Result, error) {
			return plugins.Errorf("no forecast for %q: try a nearby city", req.City), nil
		}),
		plugins.Handle("error", func(context.Context, struct{}) (*plugins.Result, error) {
			return nil, errors.New("the weather service is down")
		}),
		plugins.Handle("boom", func(context.Context, struct{}) (*plugins.Result, error) {
			panic("kaboom")
		}),
		plugins.Handle("events", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			plugins.Progress(ctx, 1, 3, "one")
			plugins.Log(ctx, "info", "hello")
			plugins.Progress(ctx, 2, 3, "two")
			plugins.Log(ctx, "warning", "careful")
			plugins.Progress(ctx, 3, 3, "three")
			return plugins.Text("done"), nil
		}),
		plugins.Handle("flood", func(ctx context.Context, req struct{ Events, Bytes int }) (*plugins.Result, error) {
			msg := strings.Repeat("x", req.Bytes)
			for i := range req.Events {
				if i%2 == 0 {
					plugins.Log(ctx, "info", msg)
				} else {
					plugins.Progress(ctx, float64(i), float64(req.Events), msg)
				}
			}
			return plugins.Text("flooded"), nil
		}),
		plugins.Handle("big", func(_ context.Context, req struct{ Bytes int }) (*plugins.Result, error) {
			return plugins.Text(strings.Repeat("x", req.Bytes)), nil
		}),
		plugins.Handle("wait", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			plugins.Progress(ctx, 0, 0, "started")
			select {
			case <-ctx.Done():
				fmt.Fprintf(os.Stderr, "call %s observed %v\n", plugins.CallID(ctx), ctx.Err())
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return plugins.Text("never cancelled"), nil
			}
		}),
		plugins.Handle("trace", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			// The host's span context, which reaches the handler's
			// context with the plugin's own tracing off.
			sc := trace.SpanContextFromContext(ctx)
			return plugins.JSON(map[string]string{"trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String()})
		}),
		plugins.Handle("deadline", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			d, ok := ctx.Deadline()
			return plugins.JSON(map[string]any{"has_deadline": ok, "remaining_ms": time.Until(d).Milliseconds()})
		}),
		plugins.Handle("stderr", func(_ context.Context, req struct{ Message string }) (*plugins.Result, error) {
			log.SetFlags(0)
			log.Printf("log: %s", req.Message)                     // the stderr file descriptor
			fmt.Fprintf(os.Stderr, "os.Stderr: %s\n", req.Message) // go-plugin's gRPC stdio
			fmt.Printf("stdout: %s\n", req.Message)
			return plugins.Text("ok"), nil
		}),
		plugins.Handle("getenv", func(_ context.Context, req struct{ Name string }) (*plugins.Result, error) {
			return plugins.Text(os.Getenv(req.Name)), nil
		}),
		plugins.Handle("environ", func(ctx context.Context, _ struct{}) (*plugins.Result, error) {
			// The plugin's environment, and that of a program it starts,
			// as a shell's env prints it.
			child, err := exec.CommandContext(ctx, "env").Output()
			if err != nil {
				return nil, fmt.Errorf("env: %v", err)
			}
			return plugins.JSON(map[string]any{"self": os.Environ(), "child": strings.Split(strings.TrimSpace(string(child)), "\n")})
		}),
	)
}
