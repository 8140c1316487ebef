package rpc

import (
	"encoding/json"
	"math"
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
