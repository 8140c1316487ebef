package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resumable streams and SSE polling (SEP-1699, MCP 2025-11-25): with
// HTTPOptions.SSEPollAfter set, the session handler keeps the events of
// each SSE stream in a bounded store, starts each stream of a 2025-11-25
// request with a priming event (an event ID and no data), and closes the
// stream of a tools/call still running after SSEPollAfter, with a retry
// hint. The client reconnects with GET and Last-Event-ID, and the resumed
// stream carries the rest of the call: its progress, its log lines and
// its result. A proxy that cuts a response off after some seconds, or a
// client whose connection drops, then no longer loses the call.

// DefaultSSEPollRetry is the reconnection delay (the SSE retry field) sent
// when a call's stream is closed, when HTTPOptions.SSEPollRetry is zero.
const DefaultSSEPollRetry = time.Second

// SSEStoreBytes bounds the memory of the stored events, over every
// session: past it, the oldest events are dropped, and a client that
// resumes a stream whose events are gone gets 400 and the call is lost to
// it. A result is stored until its session ends or the bound drops it.
const SSEStoreBytes = 16 << 20

// polledRevision is the first revision with priming events and the retry
// field. Older clients cannot resume a stream that has no event ID, and
// 2026-07-28 has no resumable streams (SEP-2575), so only the revisions
// from this one up to modernRevision are polled.
const polledRevision = "2025-11-25"

// newEventStore is the bounded store of the session handler's events.
func newEventStore() *mcp.MemoryEventStore {
	store := mcp.NewMemoryEventStore(nil)
	store.SetMaxBytes(SSEStoreBytes)
	return store
}

// ssePoll closes, once, the SSE stream of a legacy session's tools/call
// that is still running after the delay, asking the client to come back
// after retry. Once, because a stream resumed by GET gets no new event ID
// while the call is silent, and clients count a reconnection that brings
// no new event against their retry budget (go-sdk's gives up after 5):
// closing it again and again would make them drop the session. The
// resumed stream then stays open until the call ends.
func ssePoll(after, retry time.Duration) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Extra == nil || call.Extra.CloseSSEStream == nil {
				return next(ctx, method, req)
			}
			// go-sdk primes a stream, and writes the retry field, by the
			// request's header, not by the session's revision. Waits for
			// go-sdk: priming by the session's revision, and a stream
			// closed after a delay by the handler itself.
			if v := call.Extra.Header.Get("MCP-Protocol-Version"); v < polledRevision || v >= modernRevision {
				return next(ctx, method, req)
			}
			closeStream := call.Extra.CloseSSEStream
			t := time.AfterFunc(after, func() { closeStream(mcp.CloseSSEStreamArgs{RetryAfter: retry}) })
			defer t.Stop()
			return next(ctx, method, req)
		}
	}
}
