package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/caller"
	"github.com/toolc/toolc/plugins"
)

// Scope policy: a call made for an OAuth caller (oauth.WithCaller on its
// context) reaches only the tools whose scopes the caller's token holds.
// The transports (packages mcpserver and httpapi) ask AccessTo before they
// list or call a tool, so that every answer about a tool follows the same
// three cases; Call asks it too, for any path that reaches the runtime.

// Allows reports whether the caller may see and call the tool. No caller
// (no OAuth) sees everything.
func Allows(c *caller.Caller, t *catalog.Tool) bool {
	return c == nil || len(c.Missing(t.Scopes)) == 0
}

// Access is what an OAuth caller may do with, and learn of, a tool.
type Access int

const (
	// Callable: the token holds every scope the tool needs (or there is
	// no OAuth). The caller lists and calls the tool.
	Callable Access = iota
	// StepUp: the token holds the scopes of the tool's service but not
	// the tool's own. The tool is not listed, but a call to it is told
	// which scopes it needs (403 insufficient_scope), so that the client
	// can ask for them: the caller may use the service, and learning
	// that one of its tools wants more is what lets it step up.
	StepUp
	// Hidden: the token lacks the service's scopes. The caller may not
	// learn that the tool exists: every answer about it is the answer
	// about a tool that does not exist, word for word.
	Hidden
)

// AccessTo returns what the caller may do with the tool.
func AccessTo(c *caller.Caller, t ToolInfo) Access {
	switch {
	case Allows(c, t.Tool):
		return Callable
	case len(c.Missing(t.Service.Scopes)) == 0:
		return StepUp
	}
	return Hidden
}

// InsufficientScopeError is the error of Runtime.Call for a tool that the
// caller (oauth.CallerFrom of the call's context) may know of but whose
// scopes its token lacks: the HTTP answer is 403 with the
// insufficient_scope challenge, and over MCP the JSON-RPC error
// mcpserver.CodeInsufficientScope.
type InsufficientScopeError struct {
	// Tool is the name the client called the tool by: its function name
	// or its MCP name.
	Tool string
	// Scopes are all the scopes the tool needs, not only the missing
	// ones, so that a new token asked for with them has them all.
	Scopes []string
}

func (e *InsufficientScopeError) Error() string {
	return fmt.Sprintf("tool %q needs the scopes %s", e.Tool, strings.Join(e.Scopes, " "))
}

// hiddenToolError is the error for a tool the caller may not know of. Its
// text is an unknown tool's, and it is ErrUnknownTool to errors.Is, so that
// every answer made from it is an unknown tool's; only the audit line
// tells the two apart, for the operator.
type hiddenToolError struct{ name string }

func (e *hiddenToolError) Error() string {
	return fmt.Sprintf("%v %s", ErrUnknownTool, QuoteName(e.name))
}
func (e *hiddenToolError) Is(target error) bool { return target == ErrUnknownTool }

// withCaller puts the OAuth caller of ctx, if any, on it as the handler's
// plugins.Caller: in process for runtime.Local, and through the plugin
// protocol for a plugin. Only the subject, client and scopes go: never
// the token.
func withCaller(ctx context.Context, c *caller.Caller) context.Context {
	if c == nil {
		return ctx
	}
	return plugins.WithCaller(ctx, plugins.Caller{Subject: c.Subject, ClientID: c.ClientID, Scopes: c.Scopes})
}
