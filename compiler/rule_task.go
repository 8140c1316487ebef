package compiler

import (
	"github.com/toolc/toolc/diag"
)

// taskSupportRule checks a tool's task key: whether the tool runs as a
// task of MCP's Tasks extension (io.modelcontextprotocol/tasks). The value
// reaches every MCP client as the tool's execution.taskSupport, and
// decides at run time whether a client without the extension may call the
// tool at all, so a misspelt one must fail here, not in a client.
var taskSupportRule = &Rule{
	ID:       "task-support",
	Doc:      `task of a tool, if set, is "optional" (a task for clients of MCP's Tasks extension, a plain call for others) or "required" (clients of the extension only)`,
	Severity: diag.Error,
	Check: func(p *Pass) {
		for s := range p.services() {
			for _, t := range s.root.get("tools").structFields() {
				v := t.get("task")
				switch {
				case v == nil:
				case v.kind == kString && (v.str == "optional" || v.str == "required"):
				case v.kind == kString:
					p.reportf(v.pos, "task of tool %q must be \"optional\" or \"required\", not %q", t.label, v.str)
				default:
					p.reportf(v.pos, "task of tool %q must be \"optional\" or \"required\", not %s", t.label, describeNode(v))
				}
			}
		}
	},
}
