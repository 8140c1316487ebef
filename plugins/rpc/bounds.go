package rpc

import (
	"fmt"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"

	"github.com/toolc/toolc/plugins"
)

// What the host takes from a plugin during a call is bounded where it
// arrives, so that a plugin cannot make the host hold, or pass on to a
// client, more than the call's bounds allow:
//
//   - every message of the call, the result and each event, is bounded by
//     the call's result limit (plugins.ResultLimit) and an envelope for the
//     protobuf's own bytes; gRPC refuses a larger one from its header;
//   - a call's log and progress events are let through at eventsPerSecond,
//     after a first eventBurst; the rest are dropped and counted, and the
//     client is told how many at the end of the call;
//   - an event's message is cut at maxEventMessage bytes, its level and
//     logger at maxEventName.
const (
	eventBurst      = 256
	eventsPerSecond = 100
	maxEventMessage = 16 << 10
	maxEventName    = 256
)

// recvLimit returns the gRPC call options that bound each message of a
// call whose result may be limit bytes; none without a limit, which
// leaves the connection's own, MaxMessageSize.
func (c *Client) recvLimit(limit int) []grpc.CallOption {
	if limit <= 0 {
		return nil
	}
	if o := c.recv.Load(); o != nil && o.limit == limit {
		return o.opts
	}
	o := &recvOption{limit: limit, opts: []grpc.CallOption{grpc.MaxCallRecvMsgSize(recvBound(limit))}}
	c.recv.Store(o)
	return o.opts
}

// recvOption is the call options for one limit, kept for the next call
// with the same, which is every call under one runtime.
type recvOption struct {
	limit int
	opts  []grpc.CallOption
}

// eventGate lets a call's events through at eventsPerSecond, after a
// burst of eventBurst, and counts the ones it drops. One call's stream is
// read by one goroutine: it needs no lock.
type eventGate struct {
	tokens  float64
	last    time.Time
	dropped int
}

func (g *eventGate) allow() bool {
	now := time.Now()
	if g.last.IsZero() {
		g.tokens = eventBurst
	} else {
		g.tokens = min(eventBurst, g.tokens+now.Sub(g.last).Seconds()*eventsPerSecond)
	}
	g.last = now
	if g.tokens >= 1 {
		g.tokens--
		return true
	}
	g.dropped++
	return false
}

// report tells the client, as a log event of the call, how many events
// the gate dropped, if any.
func (g *eventGate) report(onEvent func(plugins.Event), service string) {
	if g.dropped == 0 || onEvent == nil {
		return
	}
	onEvent(plugins.Event{Log: &plugins.LogEvent{Level: "warning", Logger: "toolc", Message: fmt.Sprintf(
		"toolc dropped %d log and progress events of this call from the handler of service %q: a call may send %d a second, after a first %d",
		g.dropped, service, eventsPerSecond, eventBurst)}})
}

// cut returns s cut to at most n bytes, at a character's start, and says
// how much was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("… [%d bytes cut]", len(s)-i)
}
