package runtime

import (
	"context"
	"encoding/json"
	"fmt"
)

// ArgumentCheck is a transport's own check of a call against its
// arguments: MCP's Mcp-Param-* headers (SEP-2243), which must carry the
// arguments the handler runs with. The runtime runs it once the arguments
// are valid, just before the handler, on the snapshot the call runs on:
// given are the arguments as the caller sent them (the string form
// unwrapped), and valid are the very bytes the handler receives, in the
// validator's canonical form (defaults added, null for an optional field
// left out, integers plain). So the check cannot judge other arguments
// than the ones that run, however the caller spelled them, and a reload
// between a transport's early check and the call cannot slip another
// tool's contract in.
//
// An error refuses the call: Call returns it as it is, and the call is not
// counted in Stats, as a request the transport refuses before the runtime
// sees it is not.
type ArgumentCheck func(t ToolInfo, given, valid json.RawMessage) error

type argumentCheckKey struct{}

// WithArgumentCheck returns ctx with check, which every call made with it
// runs (see ArgumentCheck).
func WithArgumentCheck(ctx context.Context, check ArgumentCheck) context.Context {
	return context.WithValue(ctx, argumentCheckKey{}, check)
}

func argumentCheckFrom(ctx context.Context) ArgumentCheck {
	check, _ := ctx.Value(argumentCheckKey{}).(ArgumentCheck)
	return check
}

// kindChecked marks, inside the runtime, a call that its ArgumentCheck
// refused.
const kindChecked = "checked"

// Arguments returns the arguments of a call of the named tool (function
// or MCP name) as Call reads them: given, as the caller sent them with the
// string form unwrapped, and valid, as the handler would receive them.
// err is the problem that Call's tool error would state, when they are
// invalid, or ErrUnknownTool. A transport that must answer before the call
// (an HTTP status) reads them here, with the validator the call uses.
func (s *Snapshot) Arguments(name string, args json.RawMessage) (given, valid json.RawMessage, err error) {
	e := s.lookup(name)
	if e == nil {
		return nil, nil, fmt.Errorf("%w %s", ErrUnknownTool, QuoteName(name))
	}
	return e.arguments(name, args, s.maxArgs)
}

// arguments unwraps the string form, bounds the size and validates: the
// one reading of a call's arguments. called is the name the client called
// the tool by, which the messages use.
func (e *entry) arguments(called string, args json.RawMessage, limit int) (given, valid json.RawMessage, err error) {
	// The limit is on the arguments themselves: in the string form, the
	// string's escapes do not count.
	given, err = unwrapStringArguments(args)
	if err != nil {
		return nil, nil, err
	}
	if len(given) > limit {
		return nil, nil, fmt.Errorf("the arguments are %d bytes, over the limit of %d; send less", len(given), limit)
	}
	valid, err = e.args.Validate(given)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid arguments for %s: %v", called, err)
	}
	return given, valid, nil
}
