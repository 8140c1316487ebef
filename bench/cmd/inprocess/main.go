// Command inprocess is the smallest service that calls its tools in
// process: it loads a catalog that toolc build wrote, gives the runtime
// the notes handlers of examples/embed (runtime.Local), and runs the calls
// given on the command line with runtime.Call, one tool and its arguments
// each, with no transport at all. BENCHMARKS.md compares the size of its
// binary before and after the runtime lost its transports (issue 19).
//
//	go run ./bench/cmd/inprocess examples/embed/toolc.catalog.json add_note '{"title":"Buy milk"}' find_notes '{"query":"milk"}'
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/examples/embed/notes"
	"github.com/toolc/toolc/runtime"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "inprocess:", err)
		os.Exit(1)
	}
}

// result is what run prints of a call's result.
type result struct {
	Text              string `json:"text"`
	StructuredContent any    `json:"structuredContent,omitempty"`
	IsError           bool   `json:"isError"`
}

// run loads the catalog args[0] and runs each pair of a tool and its
// arguments after it, printing each result as JSON on a line of out.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || len(args)%2 == 0 {
		return fmt.Errorf("usage: inprocess CATALOG [TOOL ARGUMENTS]...")
	}
	cat, err := catalog.Load(os.DirFS(filepath.Dir(args[0])), filepath.Base(args[0]))
	if err != nil {
		return err
	}
	rt := runtime.New(runtime.Options{})
	if _, err := rt.Swap(cat, map[string]runtime.Dispatcher{"notes": runtime.Local(notes.Handlers(notes.New())...)}); err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	for i := 1; i < len(args); i += 2 {
		res, err := rt.Call(ctx, args[i], json.RawMessage(args[i+1]))
		if err != nil {
			return err
		}
		var text strings.Builder
		for _, c := range res.Content {
			text.WriteString(c.Text)
		}
		if err := enc.Encode(result{text.String(), res.StructuredContent, res.IsError}); err != nil {
			return err
		}
	}
	return nil
}
