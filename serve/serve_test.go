package serve_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/serve"
)

func health(t *testing.T, addr net.Addr) (int, string) {
	t.Helper()
	res, err := http.Get("http://" + addr.String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestRunHTTP: Run answers /healthz "starting" while the load runs, and
// "ok" once it is over; it tells Serving where it serves; and once ctx
// ends it drains (Shutdown.Report), closes the tools and returns nil.
func TestRunHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	served := make(chan net.Addr, 1)
	var reports []runtime.ShutdownReport
	closed := false
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, runtime.New(runtime.Options{}), serve.Options{
			Listener: ln,
			Tools:    serve.Tools{Load: func(context.Context) error { <-release; return nil }, Close: func() { closed = true }},
			Serving:  func(addr net.Addr, err error) { served <- addr },
			Shutdown: runtime.ShutdownOptions{Report: func(r runtime.ShutdownReport) { reports = append(reports, r) }},
		})
	}()
	if code, body := health(t, ln.Addr()); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
		t.Errorf("/healthz during the load = %d %s, want 503 starting", code, body)
	}
	close(release)
	if addr := <-served; addr.String() != ln.Addr().String() {
		t.Errorf("Serving was told %v, want %v", addr, ln.Addr())
	}
	if code, body := health(t, ln.Addr()); code != http.StatusOK || !strings.Contains(body, "ok") {
		t.Errorf("/healthz after the load = %d %s, want 200 ok", code, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil after ctx ended", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	if len(reports) == 0 {
		t.Error("Run did not drain: no shutdown report")
	}
	if !closed {
		t.Error("Run did not close the tools it loaded")
	}
}

// TestRunLoadFailed: a first load that fails ends Run with what
// LoadFailed makes of its error, at once without ServeFailure, and once
// the stdio client hangs up with it; Serving hears of the failure only
// when Run goes on serving.
func TestRunLoadFailed(t *testing.T) {
	broken := errors.New("the handlers do not build")
	wrapped := errors.New("exit status 1")
	for _, serveFailure := range []bool{false, true} {
		in, hangUp := io.Pipe()
		var told []error
		var servingErr error
		serving := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- serve.Run(context.Background(), runtime.New(runtime.Options{}), serve.Options{
				Stdin: in, Stdout: io.Discard,
				Tools:      serve.Tools{Load: func(context.Context) error { return broken }, ServeFailure: serveFailure},
				LoadFailed: func(err error) error { told = append(told, err); return wrapped },
				Serving:    func(_ net.Addr, err error) { servingErr = err; close(serving) },
			})
		}()
		if serveFailure {
			<-serving
			select {
			case err := <-done:
				t.Fatalf("ServeFailure: Run = %v before the client hung up", err)
			case <-time.After(100 * time.Millisecond):
			}
			hangUp.Close()
		}
		select {
		case err := <-done:
			if err != wrapped {
				t.Errorf("ServeFailure %v: Run = %v, want LoadFailed's %v", serveFailure, err, wrapped)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("ServeFailure %v: Run did not return", serveFailure)
		}
		hangUp.Close()
		if len(told) != 1 || told[0] != broken {
			t.Errorf("ServeFailure %v: LoadFailed was told %v, want once %v", serveFailure, told, broken)
		}
		if want := map[bool]error{true: broken}[serveFailure]; servingErr != want {
			t.Errorf("ServeFailure %v: Serving was told %v, want %v", serveFailure, servingErr, want)
		}
	}
}

// TestRunLoadEndsAfterHangUp: a load that fails after the client hung up
// (or ctx ended) is cut short only when its error is the cancellation's;
// a real failure that merely lands later (a contract that does not
// compile, found as a stdio client left at once) is reported, through
// LoadFailed, with its exit status. Before, any error after ctx ended
// made Run return nil: toolc dev --stdio ./nothing exited 0 when its
// standard input was empty, and TestServeExposed failed now and then.
func TestRunLoadEndsAfterHangUp(t *testing.T) {
	broken := errors.New("no contract in ./nothing")
	wrapped := errors.New("exit status 2")
	for _, tt := range []struct {
		name string
		// fail is what the load returns once ctx has ended.
		fail func(ctx context.Context) error
		want error
	}{
		{"real failure", func(context.Context) error { return broken }, wrapped},
		{"cut short", func(ctx context.Context) error { return fmt.Errorf("building: %w", ctx.Err()) }, nil},
	} {
		for _, serveFailure := range []bool{false, true} {
			in, hangUp := io.Pipe()
			var told []error
			servingTold := false
			done := make(chan error, 1)
			go func() {
				done <- serve.Run(context.Background(), runtime.New(runtime.Options{}), serve.Options{
					Stdin: in, Stdout: io.Discard,
					Tools: serve.Tools{Load: func(ctx context.Context) error {
						<-ctx.Done() // the client hangs up first
						return tt.fail(ctx)
					}, ServeFailure: serveFailure},
					LoadFailed: func(err error) error { told = append(told, err); return wrapped },
					Serving:    func(net.Addr, error) { servingTold = true },
				})
			}()
			hangUp.Close()
			select {
			case err := <-done:
				if err != tt.want {
					t.Errorf("%s, ServeFailure %v: Run = %v, want %v", tt.name, serveFailure, err, tt.want)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s, ServeFailure %v: Run did not return", tt.name, serveFailure)
			}
			if wantTold := tt.want != nil; (len(told) == 1) != wantTold {
				t.Errorf("%s, ServeFailure %v: LoadFailed was told %v", tt.name, serveFailure, told)
			}
			if servingTold {
				t.Errorf("%s, ServeFailure %v: Serving was told, though the session was over", tt.name, serveFailure)
			}
		}
	}
}
