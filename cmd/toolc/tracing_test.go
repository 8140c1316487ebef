package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/internal/otlptest"
)

// TestServeTracing: toolc serve with an OTLP endpoint in its environment
// exports a span per call, the child of the client's traceparent, and its
// plugin exports the handler's span, the child of toolc's; both processes
// send what they buffered as they shut down.
func TestServeTracing(t *testing.T) {
	recv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "")
	// Ten minutes: the spans arrive only because the processes flush as
	// they stop.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")
	cmd, url, stderr := startServeHTTP(t, faultyPattern)

	// /v1/call with a traceparent header.
	const viaHTTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req, _ := http.NewRequest("POST", url+"/v1/call", strings.NewReader(`{"name": "trace_context"}`))
	req.Header.Set("traceparent", viaHTTP)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var res struct{ StructuredContent map[string]string }
	if err := json.Unmarshal(body, &res); err != nil || res.StructuredContent["trace_id"] != viaHTTP[3:35] {
		t.Fatalf("/v1/call answered %s (%v), want the handler in trace %s", body, err, viaHTTP[3:35])
	}

	// MCP with the trace context in params._meta.
	const viaMeta = "00-5bf92f3577b34da6a3ce929d0e0e4737-10f067aa0ba902b8-01"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, tl := range tools.Tools {
		if strings.HasSuffix(tl.Name, "trace_context") {
			name = tl.Name
		}
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Meta: mcp.Meta{"traceparent": viaMeta}}); err != nil {
		t.Fatal(err)
	}
	session.Close()
	if n := recv.Requests(); n != 0 {
		t.Fatalf("%d batches exported before the shutdown, with a batch delay of ten minutes", n)
	}

	if err := terminate(t, cmd, 20*time.Second, stderr.String); err != nil {
		t.Fatalf("toolc serve after SIGTERM: %v\n%s", err, stderr.String())
	}

	for _, tc := range []struct{ traceparent, server string }{
		{viaHTTP, "execute_tool trace_context"},
		{viaMeta, "tools/call " + name},
	} {
		traceID, parentID := tc.traceparent[3:35], tc.traceparent[36:52]
		server := recv.WaitFor(t, 5*time.Second, "toolc's", func(s otlptest.Span) bool { return s.Name == tc.server && s.TraceID == traceID && s.Service == "toolc" })
		if server.Service != "toolc" || server.ParentSpanID != parentID || server.Attrs["toolc.service"] != "faulty" || server.Attrs["toolc.outcome"] != "ok" {
			t.Errorf("toolc's span %+v, want the child of %s of service toolc", server, parentID)
		}
		handler := recv.WaitFor(t, 5*time.Second, "the plugin's", func(s otlptest.Span) bool {
			return s.Name == "execute_tool trace_context" && s.TraceID == traceID && s.Service != "toolc"
		})
		if handler.ParentSpanID != server.SpanID || handler.Service != "faulty" {
			t.Errorf("the plugin's span %+v, want the child of toolc's %s, of service faulty", handler, server.SpanID)
		}
	}
}

// TestServeTracingUnsupported: a tracing setting toolc cannot honour is a
// usage error, said before anything is built.
func TestServeTracingUnsupported(t *testing.T) {
	for _, env := range []string{"OTEL_TRACES_EXPORTER=zipkin", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"} {
		k, v, _ := strings.Cut(env, "=")
		t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		t.Setenv(k, v)
		r := toolc(t, repoRoot, "serve", "--http", "127.0.0.1:0", faultyPattern)
		if r.status != exitUsage || !strings.Contains(r.stderr, "toolc serve: tracing: "+k+"=") {
			t.Errorf("%s: status %d, stderr %q; want %d and the variable named", env, r.status, r.stderr, exitUsage)
		}
	}
}
