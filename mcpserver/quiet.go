package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
)

// go-sdk warns, for every session and every notification, when a
// list_changed finds no stream open to carry it: "calling
// notifications/tools/list_changed: rejected by transport: undelivered
// message: stream not connected or already closed". A legacy session's
// client may keep no GET stream open (the revisions allow it), and a
// client that went away without ending its session leaves the session
// until it has been idle for the session idle timeout, half an hour by
// default: toolc dev, reloading as a user edits, printed the same warning
// for each such session on every reload. quietUndelivered says it once,
// in words that say what it means, and passes the later ones at Debug
// (TOOLC_DEBUG shows them). Waits for go-sdk: a notification dropped for
// a session without a stream, unlogged, or logged at Debug.
type quietUndelivered struct {
	slog.Handler
	said *atomic.Bool // shared by the handlers WithAttrs and WithGroup make
}

func newQuietUndelivered(h slog.Handler) slog.Handler {
	return &quietUndelivered{Handler: h, said: new(atomic.Bool)}
}

// undelivered reports whether r is go-sdk's warning about a notification
// that no stream carried, and returns the notification's method.
func undelivered(r slog.Record) (method string, ok bool) {
	if r.Level != slog.LevelWarn || !strings.Contains(r.Message, "undelivered message") {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.Message, "calling ")
	if !ok {
		return "", false
	}
	method, _, ok = strings.Cut(rest, ":")
	return method, ok && strings.HasPrefix(method, "notifications/")
}

func (h *quietUndelivered) Handle(ctx context.Context, r slog.Record) error {
	method, ok := undelivered(r)
	if !ok {
		return h.Handler.Handle(ctx, r)
	}
	if h.said.CompareAndSwap(false, true) {
		once := slog.NewRecord(r.Time, slog.LevelWarn, method+" could not reach a session that keeps no stream open for notifications: "+
			"its client never opened one, or went away without ending the session, which then ends once idle for the session idle timeout; "+
			"the client sees the change when it next lists the tools. This is said once; later ones are logged at debug level", r.PC)
		once.AddAttrs(slog.String("error", r.Message))
		return h.Handler.Handle(ctx, once)
	}
	if !h.Handler.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	r.Level = slog.LevelDebug
	return h.Handler.Handle(ctx, r)
}

func (h *quietUndelivered) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quietUndelivered{Handler: h.Handler.WithAttrs(attrs), said: h.said}
}

func (h *quietUndelivered) WithGroup(name string) slog.Handler {
	return &quietUndelivered{Handler: h.Handler.WithGroup(name), said: h.said}
}
