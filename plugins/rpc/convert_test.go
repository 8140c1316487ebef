package rpc

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// TestSizeBoundIsAnUpperBound holds sizeBound above the exact encoded size
// of every content kind, with fields long enough for lengths of several
// bytes, and a size that needs the longest varint.
func TestSizeBoundIsAnUpperBound(t *testing.T) {
	long := strings.Repeat("x", 70000)
	size := int64(math.MinInt64)
	link := plugins.ResourceLink(long, long)
	link.Title, link.Description, link.MIMEType, link.Size = long, long, long, &size
	for _, c := range []plugins.Content{
		plugins.TextContent(long),
		plugins.TextContent(""),
		plugins.ImageContent([]byte(long), long),
		plugins.AudioContent([]byte(long), long),
		link,
		{Type: "resource_link"},
		plugins.EmbeddedText(long, long, long),
		plugins.EmbeddedBlob(long, long, []byte(long)),
		plugins.EmbeddedBlob("", "", nil),
		{Type: "text", Text: long, Role: long},
	} {
		for _, structured := range []any{nil, json.RawMessage(`{"a":"` + long + `"}`)} {
			res := &plugins.Result{Content: []plugins.Content{c, c}, IsError: true, StructuredContent: structured}
			out, err := resultToPB(res, ProtocolVersion)
			if err != nil {
				t.Fatal(err)
			}
			exact := proto.Size(&pb.CallEvent{Event: &pb.CallEvent_Result{Result: out}})
			if bound := sizeBound(out); bound < exact {
				t.Errorf("%s: sizeBound = %d, below the exact %d", c.Type, bound, exact)
			}
		}
	}
}

// TestRoleCrossesThePlugin: the role of a prompt's message (version 5)
// survives the trip through the protocol, on every kind of content, and a
// tool's content has none.
func TestRoleCrossesThePlugin(t *testing.T) {
	in := &plugins.Result{Content: []plugins.Content{
		{Type: "text", Text: "hi", Role: "user"},
		{Type: "image", Data: []byte{1}, MIMEType: "image/png", Role: "assistant"},
		plugins.EmbeddedText("docs://a", "text/plain", "a"),
	}}
	in.Content[2].Role = "user"
	pbRes, err := resultToPB(in, ProtocolVersion)
	if err != nil {
		t.Fatal(err)
	}
	out := resultFromPB(pbRes)
	for i, c := range out.Content {
		if c.Role != in.Content[i].Role {
			t.Errorf("content %d: role %q, want %q", i, c.Role, in.Content[i].Role)
		}
	}
	pbTool, _ := resultToPB(plugins.Text("x"), ProtocolVersion)
	if r := resultFromPB(pbTool).Content[0].Role; r != "" {
		t.Errorf("a tool's text has role %q", r)
	}
}

// TestPromptAndResourceHandlersInAPlugin: a plugin's prompt and resource
// handlers (version 5) are listed by Describe under their prefixes, and run
// over gRPC like a tool, the messages' roles and the resource's contents
// intact.
func TestPromptAndResourceHandlersInAPlugin(t *testing.T) {
	c, _ := startToolbox(t)
	tools := c.Tools()
	for _, want := range []string{plugins.PromptPrefix + "greet", plugins.ResourcePrefix + "page"} {
		if !slices.Contains(tools, want) {
			t.Errorf("Describe lists %v, without %s", tools, want)
		}
	}
	res := call(t, c, "prompt:greet", `{"name":"Ada"}`)
	if len(res.Content) != 2 || res.Content[0].Role != "user" || res.Content[0].Text != "Greet Ada" ||
		res.Content[1].Role != "assistant" || res.Content[1].Type != "image" {
		t.Errorf("prompt:greet = %+v", res.Content)
	}
	res = call(t, c, "resource:page", string(plugins.ResourceCall("docs://pages/intro", map[string]string{"name": "intro"})))
	if len(res.Content) != 1 || res.Content[0].Resource == nil || res.Content[0].Resource.Text != "page intro" || res.Content[0].Resource.URI != "docs://pages/intro" {
		t.Errorf("resource:page = %+v", res.Content)
	}
}
