package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Result is a tool's result, shaped like MCP's CallToolResult.
type Result struct {
	Content []Content
	// StructuredContent is MCP's structuredContent: a value that encodes as
	// a JSON object, or nil. Results from JSON, and every result that has
	// crossed the plugin boundary, hold a json.RawMessage here.
	StructuredContent any
	// IsError marks a tool error: the model sees it and can act on it.
	IsError bool
	// InputRequests, when set, are questions the handler asked (Elicit,
	// Sample, Roots) and has no answers to: the call is not finished, and
	// the other fields are empty. The host asks the client, and calls again
	// with the answers (see WithInput).
	InputRequests []InputRequest
	// MissingCapability, when set, names the capability ("elicitation",
	// "sampling" or "roots") the client lacks and the handler needed: MCP
	// answers the call with a MissingRequiredClientCapability error.
	MissingCapability string
}

// Content is one MCP content block. Type selects which fields apply:
//
//	"text"           Text
//	"image", "audio" Data, MIMEType
//	"resource_link"  URI, Name, and optionally Title, Description, MIMEType, Size
//	"resource"       Resource
type Content struct {
	Type        string
	Text        string
	Data        []byte
	MIMEType    string
	URI         string
	Name        string
	Title       string
	Description string
	Size        *int64
	Resource    *ResourceContents
	// Role is the role of a prompt's message, "user" or "assistant";
	// empty in a tool's result.
	Role string
}

// ResourceContents is an embedded resource: Text for a text resource, or
// Blob (non-nil) for a binary one.
type ResourceContents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// NewResult returns a result holding content.
func NewResult(content ...Content) *Result {
	return &Result{Content: content}
}

// Text returns a result of one text block.
func Text(s string) *Result {
	return NewResult(TextContent(s))
}

// JSON returns a result whose structuredContent is v, with a text block that
// holds the same JSON, as MCP recommends for clients that read only text.
// v must encode as a JSON object.
func JSON(v any) (*Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("plugins: encode structured content: %w", err)
	}
	if !isObject(b) {
		return nil, fmt.Errorf("plugins: structured content must be a JSON object, not %.40s", b)
	}
	return &Result{Content: []Content{TextContent(string(b))}, StructuredContent: json.RawMessage(b)}, nil
}

// Errorf returns a tool error: a result with IsError set and the message as
// text, for the model to read and act on.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: []Content{TextContent(fmt.Sprintf(format, args...))}, IsError: true}
}

// TextContent is a text block.
func TextContent(s string) Content {
	return Content{Type: "text", Text: s}
}

// ImageContent is an image block; data is the raw image, not base64.
func ImageContent(data []byte, mime string) Content {
	return Content{Type: "image", Data: data, MIMEType: mime}
}

// AudioContent is an audio block; data is the raw audio, not base64.
func AudioContent(data []byte, mime string) Content {
	return Content{Type: "audio", Data: data, MIMEType: mime}
}

// ResourceLink is a link to a resource the client may fetch. Set Title,
// Description, MIMEType or Size on the returned value as needed.
func ResourceLink(uri, name string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name}
}

// EmbeddedText is an embedded text resource.
func EmbeddedText(uri, mime, text string) Content {
	return Content{Type: "resource", Resource: &ResourceContents{URI: uri, MIMEType: mime, Text: text}}
}

// EmbeddedBlob is an embedded binary resource.
func EmbeddedBlob(uri, mime string, blob []byte) Content {
	if blob == nil {
		blob = []byte{} // a nil Blob would read as a text resource
	}
	return Content{Type: "resource", Resource: &ResourceContents{URI: uri, MIMEType: mime, Blob: blob}}
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}
