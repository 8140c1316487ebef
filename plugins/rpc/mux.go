package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// Protocol version 5 carries a plugin's calls over one Calls stream, which
// lives as long as the connection, instead of a Call RPC each: a call is
// then one message each way (and its events), where an RPC cost an HTTP/2
// stream, its headers and trailers, and the goroutines and flow-control
// state of a stream on both sides.
//
// The host's bound on what a call may send it (recvBound of the call's
// result limit) is the stream's, set when the stream opens; the plugin
// keeps each call's result within it and sends too_large in its place, as
// the header of a Call RPC's message was refused before. A message over
// the stream's bound from a plugin that breaks that rule ends the stream,
// and with it the calls in flight on it; the next call opens another.

// recvBound is the most the host receives in one message of a call whose
// result may be limit bytes: the protobuf of a result holds its bytes and
// a few of tags and lengths per content block, so an eighth more, and 64
// KiB, leave room for tens of thousands of blocks.
func recvBound(limit int) int {
	if limit <= 0 {
		return MaxMessageSize
	}
	return min(limit+limit/8+64<<10, MaxMessageSize)
}

// replyEnvelope is what a CallReply adds to the CallEvent it carries: its
// number and the tags and lengths.
const replyEnvelope = 32

// mux is the host's side of one Calls stream.
type mux struct {
	limit  int // the result limit whose bound the stream has
	stream pb.Plugin_CallsClient
	end    context.CancelFunc

	sendMu sync.Mutex // a stream takes one Send at a time

	mu    sync.Mutex
	calls map[uint64]*muxCall
	next  uint64
	err   error // why the stream ended; no call starts on it after
}

// muxCall is a call in flight on a mux: the replies the stream brought it
// that it has not read yet.
type muxCall struct {
	mu      sync.Mutex
	replies []*pb.CallReply
	err     error // the stream ended
	wake    chan struct{}
}

func (c *muxCall) put(r *pb.CallReply, err error) {
	c.mu.Lock()
	if r != nil {
		c.replies = append(c.replies, r)
	} else {
		c.err = err
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// take returns the replies that arrived since the last take, or the error
// that ended the stream once they are all read.
func (c *muxCall) take(buf []*pb.CallReply) ([]*pb.CallReply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf = append(buf[:0], c.replies...)
	clear(c.replies)
	c.replies = c.replies[:0]
	if len(buf) == 0 && c.err != nil {
		return nil, c.err
	}
	return buf, nil
}

// muxFor returns the Calls stream for calls with result limit, opening it
// if there is none; nil when the plugin is older than version 5, or when
// the stream open is for another limit (then the call takes a Call RPC,
// which bounds its messages by its own limit).
func (c *Client) muxFor(limit int) *mux {
	if c.version < 5 || c.noMux.Load() {
		return nil
	}
	c.muxMu.Lock()
	defer c.muxMu.Unlock()
	if m := c.mux; m != nil {
		m.mu.Lock()
		broken := m.err != nil
		m.mu.Unlock()
		if !broken {
			if m.limit != limit {
				return nil
			}
			return m
		}
	}
	ctx, end := context.WithCancel(context.Background())
	stream, err := c.rpc.Calls(ctx, grpc.MaxCallRecvMsgSize(recvBound(limit)))
	if err != nil {
		end()
		return nil
	}
	m := &mux{limit: limit, stream: stream, end: end, calls: map[uint64]*muxCall{}}
	c.mux = m
	go m.receive()
	return m
}

// receive hands each reply to its call until the stream ends, and then
// ends every call in flight with the stream's error.
func (m *mux) receive() {
	for {
		r, err := m.stream.Recv()
		if err != nil {
			if err == io.EOF || status.Code(err) == codes.Canceled {
				// The plugin ended the stream, or the host did as it
				// stopped the plugin: to the calls in flight, either is
				// the plugin gone.
				err = status.Error(codes.Unavailable, "the plugin's calls stream ended: "+err.Error())
			}
			m.mu.Lock()
			m.err = err
			calls := m.calls
			m.calls = nil
			m.mu.Unlock()
			for _, c := range calls {
				c.put(nil, err)
			}
			m.end()
			return
		}
		m.mu.Lock()
		c := m.calls[r.Id]
		if c != nil && (r.Event.GetResult() != nil || r.TooLarge != 0 || r.Failure != nil) {
			delete(m.calls, r.Id)
		}
		m.mu.Unlock()
		if c != nil { // else a call the host has stopped waiting for
			c.put(r, nil)
		}
	}
}

func (m *mux) send(f *pb.CallFrame) error {
	m.sendMu.Lock()
	defer m.sendMu.Unlock()
	return m.stream.Send(f)
}

// start sends req as a new call, and returns the call and its number.
func (m *mux) start(req *pb.CallRequest) (*muxCall, uint64, error) {
	c := &muxCall{wake: make(chan struct{}, 1)}
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, 0, m.err
	}
	m.next++
	id := m.next
	m.calls[id] = c
	m.mu.Unlock()
	if err := m.send(&pb.CallFrame{Id: id, Frame: &pb.CallFrame_Start{Start: req}}); err != nil {
		if err == io.EOF {
			// gRPC's Send says only io.EOF once the stream has ended;
			// why it ended (Unimplemented from a plugin that serves no
			// Calls, say) comes from Recv, and receive hands that to
			// every call still registered, this one included.
			return c, id, nil
		}
		m.forget(id)
		return nil, 0, err
	}
	return c, id, nil
}

// forget stops waiting for call id, and tells the plugin to cancel it.
func (m *mux) forget(id uint64) {
	m.mu.Lock()
	_, live := m.calls[id]
	delete(m.calls, id)
	broken := m.err != nil
	m.mu.Unlock()
	if live && !broken {
		m.send(&pb.CallFrame{Id: id, Frame: &pb.CallFrame_Cancel{Cancel: true}})
	}
}

// callMux is Call over the Calls stream m: the same results, events and
// errors as over a Call RPC.
func (c *Client) callMux(ctx context.Context, m *mux, req *pb.CallRequest, onEvent func(plugins.Event)) (*plugins.Result, error) {
	req.ResultLimit = int64(m.limit)
	if d, ok := ctx.Deadline(); ok {
		// As over a Call RPC of version 2 and later: the handler gets
		// the deadline, lazily (see callRPC).
		req.TimeoutNanos = max(int64(time.Until(d)), 1)
	}
	call, id, err := m.start(req)
	if err != nil {
		return nil, c.callError(ctx, req.Tool, m.limit, err)
	}
	var gate eventGate
	var buf []*pb.CallReply
	for {
		select {
		case <-call.wake:
		case <-ctx.Done():
			m.forget(id)
			gate.report(onEvent, c.service)
			return nil, c.callError(ctx, req.Tool, m.limit, ctx.Err())
		}
		buf, err = call.take(buf)
		if status.Code(err) == codes.Unimplemented {
			// A plugin that claims version 5 but serves no Calls (one
			// built on the generated server alone): its calls take
			// Call RPCs from now on.
			c.noMux.Store(true)
			return c.callRPC(ctx, req, onEvent)
		}
		if err != nil {
			gate.report(onEvent, c.service)
			return nil, c.callError(ctx, req.Tool, m.limit, err)
		}
		for _, r := range buf {
			switch {
			case r.Failure != nil:
				gate.report(onEvent, c.service)
				return nil, c.callError(ctx, req.Tool, m.limit, status.Error(codes.Code(r.Failure.Code), r.Failure.Message))
			case r.TooLarge != 0:
				gate.report(onEvent, c.service)
				return nil, fmt.Errorf("plugins: service %q: tool %s: %w", c.service, req.Tool, &plugins.ResultTooLargeError{Size: int(r.TooLarge), Limit: m.limit})
			case r.Event.GetResult() != nil:
				gate.report(onEvent, c.service)
				return resultFromPB(r.Event.GetResult()), nil
			default:
				c.event(r.Event, onEvent, &gate)
			}
		}
	}
}

// event passes a progress or log event of a call on, through the call's
// gate.
func (c *Client) event(ev *pb.CallEvent, onEvent func(plugins.Event), gate *eventGate) {
	if onEvent == nil {
		return
	}
	switch e := ev.GetEvent().(type) {
	case *pb.CallEvent_Progress:
		if gate.allow() {
			p := e.Progress
			onEvent(plugins.Event{Progress: &plugins.ProgressEvent{Progress: p.Progress, Total: p.Total, Message: cut(p.Message, maxEventMessage)}})
		}
	case *pb.CallEvent_Log:
		if gate.allow() {
			l := e.Log
			onEvent(plugins.Event{Log: &plugins.LogEvent{Level: cut(l.Level, maxEventName), Logger: cut(l.Logger, maxEventName), Message: cut(l.Message, maxEventMessage)}})
		}
	}
}

// Calls is the plugin's side of the Calls stream: it runs each call on a
// goroutine of its own, and cancels the calls in flight when the stream
// ends. The goroutines are kept for the next calls, as gRPC's stream
// workers are (see Serve): a new goroutine per call grew its stack anew
// on every call.
func (s *server) Calls(stream pb.Plugin_CallsServer) error {
	work := make(chan func())
	defer close(work)
	run := func(f func()) {
		select {
		case work <- f: // an idle worker takes it
		default:
			go func() {
				f()
				for f := range work {
					f()
				}
			}()
		}
	}
	var sendMu sync.Mutex
	send := func(r *pb.CallReply) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(r)
	}
	var mu sync.Mutex
	running := map[uint64]context.CancelFunc{}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, cancel := range running {
			cancel()
		}
	}()
	for {
		f, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		switch fr := f.Frame.(type) {
		case *pb.CallFrame_Start:
			ctx, cancel := context.WithCancel(stream.Context())
			mu.Lock()
			running[f.Id] = cancel
			mu.Unlock()
			id, req := f.Id, fr.Start
			run(func() {
				s.serveMuxCall(ctx, id, req, send)
				mu.Lock()
				delete(running, id)
				mu.Unlock()
				cancel()
			})
		case *pb.CallFrame_Cancel:
			mu.Lock()
			cancel := running[f.Id]
			mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
}

// serveMuxCall runs one call of the Calls stream, and sends its events and
// its end.
func (s *server) serveMuxCall(ctx context.Context, id uint64, req *pb.CallRequest, send func(*pb.CallReply) error) {
	h, ok := s.handlers[req.Tool]
	if !ok {
		send(&pb.CallReply{Id: id, Failure: &pb.Failure{Code: int32(codes.NotFound), Message: fmt.Sprintf("plugin has no handler for tool %q", req.Tool)}})
		return
	}
	bound := recvBound(int(req.ResultLimit)) - replyEnvelope
	call := &callContext{send: func(ev *pb.CallEvent) error {
		// An event over the stream's bound would end every call on it:
		// it is dropped instead, where a Call RPC failed the call.
		if eventBound(ev) > bound && proto.Size(ev) > bound {
			return nil
		}
		return send(&pb.CallReply{Id: id, Event: ev})
	}}
	ev, err := s.run(ctx, h, req, call, bound)
	call.mu.Lock()
	defer call.mu.Unlock()
	call.done = true
	var tooLarge *tooLargeError
	switch {
	case errors.As(err, &tooLarge):
		send(&pb.CallReply{Id: id, TooLarge: int64(tooLarge.size)})
	case err != nil:
		// The host stopped waiting: it expects nothing more.
	default:
		send(&pb.CallReply{Id: id, Event: ev})
	}
}

// eventBound bounds a progress or log event's encoded size from above.
func eventBound(ev *pb.CallEvent) int {
	switch e := ev.GetEvent().(type) {
	case *pb.CallEvent_Progress:
		return 64 + len(e.Progress.Message)
	case *pb.CallEvent_Log:
		return 64 + len(e.Log.Level) + len(e.Log.Logger) + len(e.Log.Message)
	}
	return 64
}
