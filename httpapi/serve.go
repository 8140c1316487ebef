package httpapi

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/toolc/toolc/runtime"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	// Limits bound what one client can hold of the server.
	Limits ConnLimits
	// Shutdown says how the runtime drains once Serve's context ends.
	Shutdown runtime.ShutdownOptions
}

// Serve serves h (NewHandler's, for rt) on ln, within opts.Limits, until
// ctx ends. Then it drains rt (rt.Shutdown) while the server still
// answers, so that the answers of the calls in flight go out, gives those
// answers a second to be written, and closes the connections that remain
// (idle notification streams). It returns the error that stopped the
// server before ctx ended, or nil.
func Serve(ctx context.Context, ln net.Listener, rt *runtime.Runtime, h http.Handler, opts ServeOptions) error {
	limits := opts.Limits
	if limits.CallTimeout == 0 {
		limits.CallTimeout = rt.Options().CallTimeout
	}
	hs := NewHTTPServer(h, limits)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(LimitListener(ln, limits)) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	rt.Shutdown(opts.Shutdown)
	// The answers of the drained calls are written by now, or are being:
	// a moment for them, then the connections that remain are closed.
	shut, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if hs.Shutdown(shut) != nil {
		hs.Close()
	}
	return nil
}
