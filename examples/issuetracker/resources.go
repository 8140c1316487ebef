package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolc/toolc/plugins"
)

// IssueResource reads issues://issues/{number}: the issue as Markdown, for
// a client to show or to attach to a conversation. The runtime has checked
// the number against the contract's pattern.
func (t *tracker) IssueResource(_ context.Context, req plugins.ResourceRequest[IssueResourceVars]) ([]plugins.ResourceContents, error) {
	n, err := strconv.Atoi(req.Variables.Number)
	if err != nil {
		return nil, fmt.Errorf("issue number %q: %v", req.Variables.Number, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(n)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# #%d %s\n\n", is.number, is.title)
	fmt.Fprintf(&b, "- state: %s\n- priority: %d\n", is.state(), is.priority)
	if len(is.labels) > 0 {
		fmt.Fprintf(&b, "- labels: %s\n", strings.Join(is.labels, ", "))
	}
	if is.assignee != "" {
		fmt.Fprintf(&b, "- assignee: %s\n", is.assignee)
	}
	fmt.Fprintf(&b, "- opened by %s on %s\n", is.author, stamp(is.createdAt))
	if is.body != "" {
		fmt.Fprintf(&b, "\n%s\n", is.body)
	}
	if len(is.checklist) > 0 {
		b.WriteString("\n## Checklist\n\n")
		for _, task := range is.checklist {
			mark := " "
			if task.done {
				mark = "x"
			}
			fmt.Fprintf(&b, "- [%s] %s\n", mark, task.text)
		}
	}
	return []plugins.ResourceContents{{Text: b.String()}}, nil
}
