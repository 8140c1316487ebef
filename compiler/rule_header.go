package compiler

import (
	"fmt"
	"strings"

	"github.com/toolc/toolc/diag"
)

// mcpHeaderRule checks the headers that mcp: header mirrors arguments into
// (SEP-2243). MCP clients must drop a tool whose x-mcp-header is not
// valid, so each of these would make the tool vanish from a 2026-07-28
// client's list rather than fail loudly.
var mcpHeaderRule = &Rule{
	ID:       "mcp-header",
	Doc:      "mcp.header names an HTTP token, unique in its tool (case-insensitive), on a request field of type string, integer or boolean",
	Severity: diag.Error,
	Check: func(p *Pass) {
		// seen holds each tool's headers, lower-cased.
		seen := map[*node]map[string]field{}
		for f := range p.fields() {
			h := f.node.get("mcp").get("header")
			if h == nil {
				continue
			}
			if h.kind != kString {
				// The schema rule reports a value that is not a string.
				continue
			}
			if f.message != "request" {
				p.reportf(h.pos, "mcp.header on %s: only request fields are sent in headers", f.describe())
				continue
			}
			if f.record != nil {
				p.reportf(h.pos, "mcp.header on %s, a field of a record's items: only the request's own fields are sent in headers", f.describe())
				continue
			}
			if typ := stringAt(f.node, "type"); typ != "string" && typ != "integer" && typ != "boolean" {
				p.reportf(h.pos, "mcp.header on %s of type %s: a header carries only a string, integer or boolean", f.describe(), typ)
				continue
			}
			if bad := headerNameProblem(h.str); bad != "" {
				p.reportf(h.pos, "mcp.header %q on %s %s; a header name is letters, digits and !#$%%&'*+-.^_`|~", h.str, f.describe(), bad)
				continue
			}
			key := strings.ToLower(h.str)
			if other, ok := seen[f.tool.node][key]; ok {
				p.reportf(h.pos, "mcp.header %q on %s is also the header of %s (header names ignore case)", h.str, f.describe(), other.describe())
				continue
			}
			if seen[f.tool.node] == nil {
				seen[f.tool.node] = map[string]field{}
			}
			seen[f.tool.node][key] = f
		}
	},
}

// headerNameProblem says what keeps name from being an HTTP field-name
// token (RFC 9110 tchar), or "" if nothing does.
func headerNameProblem(name string) string {
	if name == "" {
		return "is empty"
	}
	for _, c := range name {
		if !isTChar(c) {
			return fmt.Sprintf("has %q", c)
		}
	}
	return ""
}

func isTChar(c rune) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", c)
}
