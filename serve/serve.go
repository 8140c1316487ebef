// Package serve runs a runtime's tools for their clients, from before the
// first load until the drain: MCP over standard input and output, or MCP
// and the function-call API over HTTP (httpapi.NewHandler, within
// httpapi's connection limits). Run is the one start-up and shutdown path
// of `toolc serve`, `toolc dev` and a service that embeds its catalog:
//
//	err := serve.Run(ctx, rt, serve.Options{Listener: ln, MCP: mcpserver.Options{Name: "notes"}})
//
// Run serves at once and gets the tools running meanwhile (Options.Tools):
// the gate (mcpserver.Gate) holds tools/list, tools/call and the
// function-call API until the first load is over, since a client gives up
// on a handshake within seconds and a first build may take minutes. When
// ctx ends, Run drains the runtime (runtime.Runtime.Shutdown) while the
// transport still answers, so that the calls in flight are answered.
package serve

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/toolc/toolc/httpapi"
	"github.com/toolc/toolc/internal/cutshort"
	"github.com/toolc/toolc/mcpserver"
	"github.com/toolc/toolc/runtime"
)

// Tools is how the tools get running in the runtime, and are kept so.
// The zero Tools serves the runtime as it is: its catalog swapped in
// before Run.
type Tools struct {
	// Load, if set, gets the tools running and swaps them into the
	// runtime, while Run already serves. An error that ctx's end caused
	// wraps ctx.Err() (errors.Is), and only such an error is taken for a
	// load cut short.
	Load func(ctx context.Context) error
	// OpensGate is set when Load opens the gate itself, with how each try
	// went (toolc dev, whose first load may fail and a later reload
	// succeed); otherwise the gate opens when Load returns.
	OpensGate bool
	// ServeFailure keeps serving after a load that failed, answering
	// every request for tools, held or later, with its error, until ctx
	// ends or the stdio client hangs up; Run then returns the load's
	// error (toolc serve: ending at once raced the client's first
	// tools/list, which then got no answer, and a desktop client had
	// nothing to show). Without it Run ends at once.
	ServeFailure bool
	// Stop, if set, stops the handlers at the end of a drain, which ends
	// the calls still running with reason (runtime.ShutdownOptions).
	Stop func(reason string)
	// Follow, if set, keeps the tools up to date once loaded (toolc dev's
	// reloads) until ctx ends; an error ends serving.
	Follow func(ctx context.Context) error
	// Close, if set, releases what Load started, once Run is over: toolc
	// serve's plugins are stopped by the drain, or here if serving failed.
	Close func()
	// Declared are the prompts, resources, completions, skills and task
	// tools that the tools will serve, declared to the clients that initialize before Load is
	// over (mcpserver.Options.Declared), with those of Options.MCP.
	Declared mcpserver.Features
}

// Options configure Run.
type Options struct {
	// Listener is where MCP and the function-call API are served over
	// HTTP. Without one, MCP is served over Stdin and Stdout, the
	// standard input and output of a process that an MCP client started.
	Listener net.Listener
	Stdin    io.Reader
	Stdout   io.Writer
	// MCP configures the MCP server (mcpserver.New).
	MCP mcpserver.Options
	// HTTP configures the HTTP handler (httpapi.NewHandler); Run sets its
	// Gate.
	HTTP httpapi.Options
	// Limits bound what one client can hold of the HTTP server.
	Limits httpapi.ConnLimits
	// Shutdown says how the runtime drains once ctx ends; Run sets its
	// StopHandlers to Tools.Stop.
	Shutdown runtime.ShutdownOptions
	// Gate, if set, is the gate that Run holds requests behind; a Load
	// that opens the gate itself (Tools.OpensGate) needs it before Run.
	// Nil: Run makes one.
	Gate *mcpserver.Gate
	// Tools gets the tools running; the zero Tools serves rt as it is.
	Tools Tools
	// Serving, if set, is told once the first load is over, with where
	// Run serves (nil over stdio) and the load's error, if it failed and
	// Run goes on serving (Tools.ServeFailure).
	Serving func(addr net.Addr, loadErr error)
	// LoadFailed, if set, is told at once of a first load that failed,
	// unless ctx ended or the client hung up meanwhile, and returns the
	// error that Run returns once serving ends: toolc says why at once,
	// since the answers to the held requests point at its standard error.
	// Nil: Run returns the load's error.
	LoadFailed func(err error) error
}

// followWait bounds how long Run waits, once it has served, for
// Tools.Follow to end (toolc dev's daemon stops its handlers as it ends).
const followWait = 15 * time.Second

// Run serves rt until ctx ends or, over stdio, the client hangs up, while
// it loads the tools (Options.Tools), and then drains. A load that fails
// ends Run with its error (once the session is over, see
// Tools.ServeFailure), unless the load was cut short because the client
// hung up or ctx ended, which Load says by returning an error that wraps
// ctx.Err(): then Run ends as the session did. An HTTP server that fails
// ends Run with its error.
func Run(ctx context.Context, rt *runtime.Runtime, opts Options) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	t := opts.Tools
	if t.Close != nil {
		defer t.Close()
	}
	gate := opts.Gate
	if gate == nil {
		gate = mcpserver.NewGate()
	}
	mo := opts.MCP
	d := &mo.Declared
	d.Prompts, d.Resources, d.Completions = d.Prompts || t.Declared.Prompts, d.Resources || t.Declared.Resources, d.Completions || t.Declared.Completions
	d.Skills, d.Tasks = d.Skills || t.Declared.Skills, d.Tasks || t.Declared.Tasks
	srv := mcpserver.New(rt, mo)
	srv.Hold(gate)
	shutdown := opts.Shutdown
	shutdown.StopHandlers = t.Stop
	serving := func(loadErr error) {
		if opts.Serving == nil {
			return
		}
		var addr net.Addr
		if opts.Listener != nil {
			addr = opts.Listener.Addr()
		}
		opts.Serving(addr, loadErr)
	}

	served := make(chan error, 1)
	go func() {
		if opts.Listener == nil {
			mcpserver.ServeStdio(ctx, rt, srv, opts.Stdin, opts.Stdout, mcpserver.StdioOptions{Shutdown: shutdown, Tasks: opts.MCP.Tasks})
			served <- nil
		} else {
			h := opts.HTTP
			h.Gate = gate
			served <- httpapi.Serve(ctx, opts.Listener, rt, httpapi.NewHandler(rt, srv, h), httpapi.ServeOptions{Limits: opts.Limits, Shutdown: shutdown})
		}
		stop() // the client hung up: stop the load too
	}()
	var err error
	if t.Load != nil {
		err = t.Load(ctx)
	}
	if err != nil {
		gate.Open(err)
		// Cut short: the load failed because ctx ended (its error wraps
		// ctx's, see internal/cutshort), so Run ends as the session did.
		// A real failure that lands after ctx ended (a contract that does
		// not compile, found once a stdio client has left) is reported.
		if cutshort.By(ctx, err) {
			stop()
			return <-served
		}
		loadErr := err
		if opts.LoadFailed != nil {
			err = opts.LoadFailed(err)
		}
		if !t.ServeFailure || ctx.Err() != nil {
			stop()
			<-served
			return err
		}
		serving(loadErr)
		<-served
		return err
	}
	if !t.OpensGate {
		gate.Open(nil)
	}
	serving(nil)
	followed := make(chan struct{})
	if t.Follow != nil {
		go func() {
			defer close(followed)
			if t.Follow(ctx) != nil {
				stop()
			}
		}()
	} else {
		close(followed)
	}
	err = <-served
	stop()
	select {
	case <-followed:
	case <-time.After(followWait):
	}
	return err
}
