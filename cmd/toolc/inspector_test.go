package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInspectorCLI: the MCP Inspector's CLI, the client a developer points
// at a server first, lists and calls issuetracker's tools, lists and gets
// its prompt, and lists and reads its resource and its template, over
// Streamable HTTP and over stdio, where it initializes while the handler
// builds (see TestStdioDeclaresBeforeLoad: it showed no prompts then). Node and the Inspector come from
// scripts/conformance, as for the TypeScript SDK's tests.
func TestInspectorCLI(t *testing.T) {
	node, inspector := os.Getenv("TOOLC_NODE"), os.Getenv("TOOLC_INSPECTOR")
	if node == "" || inspector == "" {
		if os.Getenv("TOOLC_REQUIRE_NODE") != "" {
			t.Fatal("TOOLC_REQUIRE_NODE is set, but TOOLC_NODE or TOOLC_INSPECTOR is not")
		}
		t.Skip("needs TOOLC_NODE and TOOLC_INSPECTOR, which scripts/test sets")
	}
	t.Parallel()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	_, url, _ := startServeHTTP(t, "./examples/issuetracker")
	cache, state := t.TempDir(), t.TempDir()
	// Its skills/list --verify reads every file of every skill and checks
	// it against the digests that skills/list gave (SEP-2640).
	t.Run("skills", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, inspector, "--cli", "--method", "skills/list", "--verify",
			"-e", "TOOLC_CACHE="+cache, "-e", "XDG_STATE_HOME="+state, "--cwd", root,
			"--", toolcBin, "serve", "--stdio", "./examples/conformance")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"name":"pdf-processing"`) || !strings.Contains(string(out), `"outcome":"verified"`) ||
			!strings.Contains(string(out), "no conformance errors") {
			t.Errorf("inspector skills/list --verify: %v\n%s", err, out)
		}
	})
	for _, tc := range []struct {
		name   string
		target []string
	}{
		// Options, not a positional URL: --tool-arg takes every word
		// up to the next option.
		{"http", []string{"--transport", "http", "--server-url", url + "/mcp"}},
		{"http, 2026-07-28", []string{"--protocol-era", "modern", "--transport", "http", "--server-url", url + "/mcp"}},
		// The Inspector gives a stdio server only the environment it is
		// told of (-e), as the TypeScript SDK does.
		{"stdio", []string{"-e", "TOOLC_CACHE=" + cache, "-e", "XDG_STATE_HOME=" + state, "--cwd", root,
			"--", toolcBin, "serve", "--stdio", "./examples/issuetracker"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inspect := func(v any, args ...string) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				// The target's "--" ends the Inspector's options.
				argv := append(append([]string{inspector, "--cli"}, args...), tc.target...)
				cmd := exec.CommandContext(ctx, node, argv...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("inspector %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
				}
				if err := json.Unmarshal(out, v); err != nil {
					t.Fatalf("inspector %s printed %s: %v", strings.Join(args, " "), out, err)
				}
			}

			var tools struct{ Tools []struct{ Name string } }
			inspect(&tools, "--method", "tools/list")
			getIssue := ""
			for _, tool := range tools.Tools {
				if strings.HasSuffix(tool.Name, "_get_issue") {
					getIssue = tool.Name
				}
			}
			if len(tools.Tools) < 10 || getIssue == "" {
				t.Fatalf("tools/list: %+v, want issuetracker's ten tools with get_issue", tools.Tools)
			}
			var call struct {
				IsError           bool
				StructuredContent struct {
					Number int
					Title  string
				}
			}
			// The Inspector sends number as the schema's integer.
			inspect(&call, "--method", "tools/call", "--tool-name", getIssue, "--tool-arg", "number=1042")
			if call.IsError || call.StructuredContent.Number != 1042 || call.StructuredContent.Title == "" {
				t.Errorf("tools/call %s: %+v", getIssue, call)
			}

			var prompts struct{ Prompts []struct{ Name string } }
			inspect(&prompts, "--method", "prompts/list")
			if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "triage_issue" {
				t.Errorf("prompts/list: %+v, want triage_issue", prompts.Prompts)
			}
			var prompt struct {
				Messages []struct {
					Content struct {
						Type, Text string
						Resource   struct{ URI, Text string }
					}
				}
			}
			inspect(&prompt, "--method", "prompts/get", "--prompt-name", "triage_issue", "--prompt-args", "number=1042")
			if len(prompt.Messages) != 2 || !strings.HasPrefix(prompt.Messages[0].Content.Text, "Triage issue #1042.") ||
				prompt.Messages[1].Content.Resource.URI != "issues://labels" {
				t.Errorf("prompts/get triage_issue: %+v", prompt.Messages)
			}

			var resources struct {
				Resources []struct{ URI, MimeType string }
			}
			inspect(&resources, "--method", "resources/list")
			if len(resources.Resources) != 1 || resources.Resources[0].URI != "issues://labels" || resources.Resources[0].MimeType != "text/markdown" {
				t.Errorf("resources/list: %+v, want issues://labels", resources.Resources)
			}
			var read struct {
				Contents []struct{ URI, MimeType, Text string }
			}
			inspect(&read, "--method", "resources/read", "--uri", "issues://labels")
			if len(read.Contents) != 1 || read.Contents[0].MimeType != "text/markdown" || !strings.HasPrefix(read.Contents[0].Text, "# Labels") {
				t.Errorf("resources/read issues://labels: %+v", read.Contents)
			}

			// The template, and an issue read through it by the plugin.
			// (The Inspector's CLI has no completion/complete:
			// TestRealClientsContent completes with the other clients.)
			var templates struct {
				ResourceTemplates []struct{ URITemplate, MimeType string }
			}
			inspect(&templates, "--method", "resources/templates/list")
			if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "issues://issues/{number}" {
				t.Errorf("resources/templates/list: %+v, want issues://issues/{number}", templates.ResourceTemplates)
			}
			var issue struct {
				Contents []struct{ URI, MimeType, Text string }
			}
			inspect(&issue, "--method", "resources/read", "--uri", "issues://issues/1042")
			if len(issue.Contents) != 1 || issue.Contents[0].URI != "issues://issues/1042" || issue.Contents[0].MimeType != "text/markdown" ||
				!strings.HasPrefix(issue.Contents[0].Text, "# #1042 Login page rejects passwords that contain a space\n") {
				t.Errorf("resources/read issues://issues/1042: %+v", issue.Contents)
			}
		})
	}
}
