package main

import (
	"context"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/mcpserver"
)

// serveMCP serves the tracker over Streamable HTTP, as toolc serve does,
// with its handlers in process. The contract was compiled in this
// directory, the test's, which is where the label guide is read from.
func serveMCP(t *testing.T) string {
	t.Helper()
	rt := newServer(t)
	srv := mcpserver.New(rt, mcpserver.Options{ContentDir: "."})
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(rt, srv, mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestTriageWithGoSDK: a go-sdk client picks the triage prompt, completes
// its arguments, and reads the issue it names and the label guide.
func TestTriageWithGoSDK(t *testing.T) {
	url := serveMCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	c, err := s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "triage_issue"}, Argument: mcp.CompleteParamsArgument{Name: "focus", Value: "e"}})
	if err != nil || !reflect.DeepEqual(c.Completion.Values, []string{"effort"}) {
		t.Errorf("complete focus \"e\" = %+v, %v; want effort", c, err)
	}
	c, err = s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "issues://issues/{number}"}, Argument: mcp.CompleteParamsArgument{Name: "number", Value: "104"}})
	if err != nil || len(c.Completion.Values) != 5 {
		t.Errorf("complete number \"104\" = %+v, %v; want the five seeded issues", c, err)
	}

	p, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "triage_issue", Arguments: map[string]string{"number": "1042"}})
	if err != nil {
		t.Fatal(err)
	}
	text := p.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(text, "issue #1042") || !strings.Contains(text, "weigh impact most") {
		t.Errorf("the triage prompt says %q; want the number and the default focus", text)
	}
	guide := p.Messages[1].Content.(*mcp.EmbeddedResource).Resource
	if guide.URI != "issues://labels" || guide.MIMEType != "text/markdown" || !strings.Contains(guide.Text, "`regression`") {
		t.Errorf("the triage prompt embeds %+v; want the label guide", guide)
	}
	if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "triage_issue", Arguments: map[string]string{"number": "1042", "focus": "mood"}}); err == nil {
		t.Error("a focus outside the enum was accepted")
	}

	r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "issues://issues/1042"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Contents[0]; got.MIMEType != "text/markdown" || !strings.HasPrefix(got.Text, "# #1042 ") {
		t.Errorf("issues://issues/1042 = %+v", got)
	}
	for uri, want := range map[string]string{
		"issues://issues/9999": "there is no issue #9999",
		"issues://issues/x":    "must match the regular expression",
		"issues://nothing":     "Resource not found",
	} {
		if _, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read %s = %v; want %q", uri, err, want)
		}
	}
}

// TestTriageWithMCPGo: mark3labs/mcp-go's client lists, gets, reads and
// completes the same.
func TestTriageWithMCPGo(t *testing.T) {
	url := serveMCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mcpgo.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	init := mcpgotypes.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgotypes.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgotypes.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	prompts, err := c.ListPrompts(ctx, mcpgotypes.ListPromptsRequest{})
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "triage_issue" || len(prompts.Prompts[0].Arguments) != 2 {
		t.Fatalf("prompts/list = %+v, %v", prompts, err)
	}
	templates, err := c.ListResourceTemplates(ctx, mcpgotypes.ListResourceTemplatesRequest{})
	if err != nil || len(templates.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list = %+v, %v", templates, err)
	}
	resources, err := c.ListResources(ctx, mcpgotypes.ListResourcesRequest{})
	if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "issues://labels" {
		t.Fatalf("resources/list = %+v, %v", resources, err)
	}
	get := mcpgotypes.GetPromptRequest{}
	get.Params.Name, get.Params.Arguments = "triage_issue", map[string]string{"number": "1041", "focus": "risk"}
	p, err := c.GetPrompt(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := mcpgotypes.AsTextContent(p.Messages[0].Content); !ok || !strings.Contains(tc.Text, "issue #1041") || !strings.Contains(tc.Text, "weigh risk most") {
		t.Errorf("prompts/get = %+v", p.Messages)
	}
	read := mcpgotypes.ReadResourceRequest{}
	read.Params.URI = "issues://issues/1041"
	r, err := c.ReadResource(ctx, read)
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := mcpgotypes.AsTextResourceContents(r.Contents[0]); !ok || !strings.HasPrefix(tr.Text, "# #1041 ") {
		t.Errorf("resources/read = %+v", r.Contents)
	}
	comp := mcpgotypes.CompleteRequest{}
	comp.Params.Ref = mcpgotypes.PromptReference{Type: "ref/prompt", Name: "triage_issue"}
	comp.Params.Argument = mcpgotypes.CompleteArgument{Name: "focus", Value: "D"}
	cr, err := c.Complete(ctx, comp)
	if err != nil || !reflect.DeepEqual(cr.Completion.Values, []string{"deadline"}) {
		t.Errorf("completion/complete = %+v, %v; want deadline", cr, err)
	}
}
