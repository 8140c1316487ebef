package runtime

import (
	"fmt"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/internal/caller"
)

// Withheld is a tool that its contract declares and the runtime does not
// serve now, and why: an upstream server's tool whose live definition
// differs from its contract. It is in no list and its calls are refused,
// as an unknown tool's are, but the refusal says why (WithheldError), so
// that a caller who knew the tool is not left guessing.
type Withheld struct {
	Service *catalog.Service
	Tool    *catalog.Tool
	// Why is what the refusal says after "withheld: ".
	Why string
}

// WithheldError is the error of a call to a withheld tool. errors.Is
// reports it as ErrUnknownTool, so that every transport answers it as
// one (a JSON-RPC invalid params error, HTTP 404); its text says why.
type WithheldError struct {
	// Name is the name the tool was called by.
	Name string
	Why  string
}

func (e *WithheldError) Error() string {
	return fmt.Sprintf("%v %s: withheld: %s", ErrUnknownTool, QuoteName(e.Name), e.Why)
}

func (e *WithheldError) Is(target error) bool { return target == ErrUnknownTool }

// SwapWithheld is Swap, for a catalog that leaves out the withheld tools
// (which cat must not have): calls to them are refused with a
// WithheldError instead of a plain unknown tool's error.
func (rt *Runtime) SwapWithheld(cat *catalog.Catalog, dispatchers map[string]Dispatcher, withheld []Withheld) (*Snapshot, error) {
	return rt.swap(cat, dispatchers, withheld)
}

// setWithheld indexes the withheld tools by function and MCP name, leaving
// out any name the snapshot serves.
func (s *Snapshot) setWithheld(withheld []Withheld) {
	for i := range withheld {
		w := &withheld[i]
		if w.Service == nil || w.Tool == nil {
			continue
		}
		for _, name := range []string{w.Tool.Name, w.Tool.ExposedMCPName(w.Service.Name)} {
			if s.lookup(name) != nil {
				continue
			}
			if s.withheld == nil {
				s.withheld = map[string]*Withheld{}
			}
			s.withheld[name] = w
		}
	}
}

// Unknown is the error of a call, by c (nil without OAuth), to a name the
// snapshot does not serve: a *WithheldError when the name is a withheld
// tool's that c may know of, and the plain unknown tool's error
// otherwise, so that a caller whose token may not see the tool learns
// nothing of it.
func (s *Snapshot) Unknown(c *caller.Caller, name string) error {
	if w := s.withheld[name]; w != nil {
		if c == nil || AccessTo(c, ToolInfo{Service: w.Service, Tool: w.Tool}) != Hidden {
			return &WithheldError{Name: name, Why: w.Why}
		}
	}
	return fmt.Errorf("%w %s", ErrUnknownTool, QuoteName(name))
}
