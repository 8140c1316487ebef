// Package otlptest is an OTLP/HTTP trace receiver for tests: what a real
// exporter sends, toolc's or a plugin's, decoded with the OTLP protobuf
// types of go.opentelemetry.io/proto/otlp, as a collector would.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, its IDs in hex as traceparent writes them.
type Span struct {
	// Service is the service.name of the span's resource.
	Service                       string
	Name                          string
	TraceID, SpanID, ParentSpanID string
	// Attrs holds the span's attributes, each value as a string.
	Attrs map[string]string
	// Status is the status code's name ("STATUS_CODE_ERROR"), Message
	// its description.
	Status, Message string
}

// Receiver receives the spans exported to its URL.
type Receiver struct {
	// URL is the value for OTEL_EXPORTER_OTLP_ENDPOINT.
	URL string

	mu       sync.Mutex
	spans    []Span
	requests int
	arrived  chan struct{}
}

// Start starts a receiver that stops when the test ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP trace export", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var export coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &export); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range export.ResourceSpans {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				got = append(got, Span{
					Service: service, Name: s.Name,
					TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentSpanID: hex.EncodeToString(s.ParentSpanId),
					Attrs:        attrs(s.Attributes),
					Status:       s.GetStatus().GetCode().String(), Message: s.GetStatus().GetMessage(),
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.requests++
	r.mu.Unlock()
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = x.StringValue
		default:
			m[kv.Key] = protoText(v)
		}
	}
	return m
}

func protoText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests returns how many exports arrived.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// WaitFor waits up to timeout for a span that match accepts, and returns
// it; the test fails without one.
func (r *Receiver) WaitFor(t testing.TB, timeout time.Duration, what string, match func(Span) bool) Span {
	t.Helper()
	deadline := time.After(timeout)
	for {
		for _, s := range r.Spans() {
			if match(s) {
				return s
			}
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("no %s span arrived within %s; got %+v", what, timeout, r.Spans())
			return Span{}
		}
	}
}
