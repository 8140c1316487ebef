package catalog_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// TestTaskSupport: a tool's task reaches the MCP projection as
// execution.taskSupport, in the typed projection and its bytes alike,
// survives the catalog file, changes the fingerprint, and a catalog file
// with a task value that is neither "optional" nor "required" is refused.
func TestTaskSupport(t *testing.T) {
	newCatalog := func(task string) *catalog.Catalog {
		c := &catalog.Catalog{Services: []*catalog.Service{{
			Name: "jobs", Version: "1.0.0", Description: "Jobs", Handler: ".",
			Tools: []*catalog.Tool{{Name: "export", Description: "Export", Task: task,
				Request: catalog.Message{Fields: []*catalog.Field{}}}},
		}}}
		c.Seal()
		return c
	}
	for _, task := range []string{"", catalog.TaskOptional, catalog.TaskRequired} {
		c := newCatalog(task)
		tools := c.MCPTools()
		switch {
		case task == "" && tools[0].Execution != nil:
			t.Errorf("task unset: execution %+v, want none", tools[0].Execution)
		case task != "" && (tools[0].Execution == nil || tools[0].Execution.TaskSupport != task):
			t.Errorf("task %q: execution %+v", task, tools[0].Execution)
		}
		projected, err := c.ProjectJSON(catalog.MCP, catalog.ProjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var typed bytes.Buffer
		enc := json.NewEncoder(&typed)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tools); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(projected)) != strings.TrimSpace(typed.String()) {
			t.Errorf("task %q: ProjectJSON\n%s\nwant the typed projection\n%s", task, projected, typed.String())
		}
		data, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := catalog.Parse(data)
		if err != nil {
			t.Fatalf("task %q: %v", task, err)
		}
		if got := back.Services[0].Tools[0].Task; got != task {
			t.Errorf("task %q: after the file, %q", task, got)
		}
	}
	if newCatalog("").Services[0].Tools[0].Fingerprint == newCatalog(catalog.TaskRequired).Services[0].Tools[0].Fingerprint {
		t.Error("task: required does not change the tool's fingerprint")
	}
	data, err := newCatalog(catalog.TaskOptional).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`"task":"optional"`), []byte(`"task":"always"`), 1)
	if bytes.Equal(bad, data) {
		t.Fatalf("no task key in the catalog file:\n%s", data)
	}
	if _, err := catalog.Parse(bad); err == nil || !strings.Contains(err.Error(), `task "always"`) {
		t.Errorf("Parse of task \"always\": %v, want an error naming it", err)
	}
}
