package main

import (
	"context"
	"strings"
	"testing"
)

// TestRun runs two calls of the notes tools through the runtime, in
// process: the second finds what the first added.
func TestRun(t *testing.T) {
	var out strings.Builder
	err := run(context.Background(), []string{"../../../examples/embed/toolc.catalog.json",
		"add_note", `{"title":"Buy milk"}`, "notes_find_notes", `{"query":"milk"}`}, &out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":1`) || !strings.Contains(lines[1], `"titles":["Buy milk"]`) {
		t.Errorf("the two calls printed:\n%s\nwant add_note's id 1, then find_notes finding it", out.String())
	}
	if err := run(context.Background(), []string{"../../../examples/embed/toolc.catalog.json", "add_note"}, &out); err == nil {
		t.Error("a tool without its arguments ran")
	}
}
