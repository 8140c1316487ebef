package main

import (
	"context"
	"fmt"

	"github.com/toolc/toolc/plugins"
)

func (fixtures) TestLoggingTool(ctx context.Context, _ TestLoggingToolRequest) (*plugins.Result, error) {
	for i, msg := range logMessages {
		if i > 0 {
			if err := sleep(ctx, step); err != nil {
				return nil, err
			}
		}
		plugins.Log(ctx, "info", msg)
	}
	return plugins.Text("Tool with logging executed successfully"), nil
}

// TestXMcpHeader echoes its arguments: the server has already held the
// Mcp-Param-* headers to them when the handler runs.
func (fixtures) TestXMcpHeader(_ context.Context, req TestXMcpHeaderRequest) (*plugins.Result, error) {
	text := "region=" + req.Region
	if req.TenantID != nil {
		text += fmt.Sprintf(" tenant_id=%d", *req.TenantID)
	}
	if req.DryRun != nil {
		text += fmt.Sprintf(" dry_run=%t", *req.DryRun)
	}
	return plugins.Text(text), nil
}
