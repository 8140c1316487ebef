package upstream

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestRelatedBody: on a call's SSE stream the server's questions get the
// call's id in their _meta; every other line, a line over
// maxRelatedLine and a last line without a newline pass as they are.
func TestRelatedBody(t *testing.T) {
	long := "data: " + strings.Repeat("x", 2*maxRelatedLine) + `"roots/list"` + "\n"
	question := `data: {"jsonrpc":"2.0","id":3,"method":"roots/list","params":{"_meta":{"k":"v"}}}` + "\n"
	in := "event: message\n" + long + question + `data: {"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n" + "data: tail"
	out, err := io.ReadAll(newRelatedBody(io.NopCloser(strings.NewReader(in)), "upstream-c1"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(out), "\n")
	if len(lines) != 6 || lines[0] != "event: message\n" || lines[1] != long || lines[3] != `data: {"jsonrpc":"2.0","id":1,"result":{}}`+"\n" || lines[4] != "\n" || lines[5] != "data: tail" {
		t.Fatalf("lines = %q", lines)
	}
	var msg struct {
		ID     int
		Method string
		Params struct {
			Meta map[string]string `json:"_meta"`
		}
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[2], "data: ")), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.ID != 3 || msg.Method != "roots/list" || msg.Params.Meta[relatedKey] != "upstream-c1" || msg.Params.Meta["k"] != "v" {
		t.Errorf("the question = %+v", msg)
	}
}
