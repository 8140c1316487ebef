package upstream

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/plugins"
)

// convertResult turns a server's result into the runtime's, which the
// runtime then holds to the contract's response fields and size limit.
func convertResult(res *mcp.CallToolResult) (*plugins.Result, error) {
	out := &plugins.Result{IsError: res.IsError, Content: make([]plugins.Content, 0, len(res.Content))}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Content = append(out.Content, plugins.Content{Type: "text", Text: c.Text})
		case *mcp.ImageContent:
			out.Content = append(out.Content, plugins.Content{Type: "image", Data: c.Data, MIMEType: c.MIMEType})
		case *mcp.AudioContent:
			out.Content = append(out.Content, plugins.Content{Type: "audio", Data: c.Data, MIMEType: c.MIMEType})
		case *mcp.ResourceLink:
			out.Content = append(out.Content, plugins.Content{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title,
				Description: c.Description, MIMEType: c.MIMEType, Size: c.Size})
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				return nil, fmt.Errorf("the upstream server returned an embedded resource without contents")
			}
			out.Content = append(out.Content, plugins.Content{Type: "resource", Resource: &plugins.ResourceContents{
				URI: c.Resource.URI, MIMEType: c.Resource.MIMEType, Text: c.Resource.Text, Blob: c.Resource.Blob}})
		default:
			return nil, fmt.Errorf("the upstream server returned content of type %T, which toolc does not pass on", c)
		}
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("the upstream server's structured content does not encode: %v", err)
		}
		out.StructuredContent = json.RawMessage(raw)
	}
	return out, nil
}
