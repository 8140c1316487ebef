package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxMCPName is the longest tool name that MCP clients reliably accept.
const MaxMCPName = 64

// MCPName derives the name under which an MCP client sees a tool. It keeps
// the results of AI4J's generateApiFunctionName(service, tool) for ordinary
// names, and bounds the length: a name over MaxMCPName characters is cut to
// 55 and suffixed with "_" and 8 hex digits of the sha256 of the joined
// name, so that two long names never collide silently.
func MCPName(service, tool string) string {
	if ordinaryMCPName(service, tool) {
		return service + "_" + tool
	}
	return mcpName(service, tool)
}

// ordinaryMCPName reports whether service + "_" + tool is already what
// mcpName would make of it: a service of letters, digits and hyphens that
// starts with a letter, a tool of letters, digits, hyphens and single
// underscores inside, and at most MaxMCPName characters in all. Contract
// names always are.
func ordinaryMCPName(service, tool string) bool {
	if service == "" || tool == "" || len(service)+1+len(tool) > MaxMCPName || !isLetter(service[0]) ||
		tool[0] == '_' || tool[len(tool)-1] == '_' {
		return false
	}
	for i := 0; i < len(service); i++ {
		if c := service[i]; !isLetter(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	for i := 0; i < len(tool); i++ {
		c := tool[i]
		if c == '_' && tool[i-1] == '_' {
			return false
		}
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func mcpName(service, tool string) string {
	joined := service + "_" + tool
	var b strings.Builder
	lastUnderscore := false
	for _, r := range joined {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-'
		if !ok {
			if !lastUnderscore {
				b.WriteByte('_')
			}
			lastUnderscore = true
			continue
		}
		b.WriteRune(r)
		lastUnderscore = false
	}
	name := strings.Trim(b.String(), "_")
	if name == "" || !isLetter(name[0]) {
		name = "tool_" + name
	}
	if len(name) > MaxMCPName {
		sum := sha256.Sum256([]byte(joined))
		name = name[:55] + "_" + hex.EncodeToString(sum[:])[:8]
	}
	return name
}

// ExposedMCPName is the tool's MCP name: the pinned one if it has one,
// otherwise MCPName(service, tool).
func (t *Tool) ExposedMCPName(service string) string {
	if t.MCPName != "" {
		return t.MCPName
	}
	return MCPName(service, t.Name)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
