package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/toolc/toolc/internal/caller"
)

// AuditOutcome names how a call that Call answered with res and err ended,
// for its audit line: ok, tool_error, unknown_tool, hidden,
// insufficient_scope or unavailable.
func AuditOutcome(res *Result, err error) string {
	var hiddenErr *hiddenToolError
	var scopeErr *InsufficientScopeError
	switch {
	case errors.As(err, &hiddenErr):
		return "hidden"
	case errors.As(err, &scopeErr):
		return "insufficient_scope"
	case err != nil && errors.Is(err, ErrUnknownTool):
		return "unknown_tool"
	case err != nil:
		return "unavailable"
	case res.IsError:
		return "tool_error"
	}
	return "ok"
}

// auditLogger is the logger of the audit lines: Options.Audit, else
// Options.Logger, with the audit=true that marks every line attached once,
// so that a handler that formats attributes ahead (slog's text and JSON
// handlers do) formats it once rather than per line.
func auditLogger(o Options) *slog.Logger {
	log := o.Audit
	if log == nil {
		log = o.Logger
	}
	return log.With("audit", true)
}

// Audit logs one line for a call of an OAuth caller c (none without
// one): who, which tool, the outcome (see AuditOutcome) and how long it
// took. The transports write it, as each knows where a call ends: the
// runtime's answer, or a refusal before the call reached it. The
// arguments only with Options.AuditArguments: they are the user's data (a
// note's text, an address), and an audit log is kept longer and read by
// more people than the calls themselves. The attributes are slog.Attrs,
// not key-value pairs, which would each be boxed: one line per call, on
// every call.
func (rt *Runtime) Audit(c *caller.Caller, tool, outcome string, took time.Duration, args json.RawMessage) {
	if c == nil || !rt.auditLog.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	duration := slog.Float64("duration_ms", float64(took.Microseconds())/1000)
	if rt.opts.AuditArguments {
		rt.auditLog.LogAttrs(context.Background(), slog.LevelInfo, "call", slog.String("subject", c.Subject), slog.String("client", c.ClientID),
			slog.String("tool", tool), slog.String("outcome", outcome), duration, slog.String("arguments", auditArguments(args)))
		return
	}
	rt.auditLog.LogAttrs(context.Background(), slog.LevelInfo, "call", slog.String("subject", c.Subject), slog.String("client", c.ClientID),
		slog.String("tool", tool), slog.String("outcome", outcome), duration)
}

// auditArguments is the arguments as the audit line carries them: the
// JSON text as it came, bounded, so that one call cannot write megabytes
// into the log.
func auditArguments(args json.RawMessage) string {
	const most = 4 << 10
	if len(args) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(args[cut]) {
			cut--
		}
		return fmt.Sprintf("%s... (%d bytes)", args[:cut], len(args))
	}
	return string(args)
}
