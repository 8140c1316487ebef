package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The real-client tests drive MCP clients of other implementations, with
// their default options, against the default endpoint of toolc dev, over
// Streamable HTTP and over stdio: each lists the tools, calls one, and
// receives list_changed when a contract edit reloads the server; then it
// calls the tool the edit added, whose handler asks the user's name, and
// its elicitation handler answers (a 2026-07-28 client in rounds of
// InputRequiredResult, a legacy one over its session).
//
//   - the go-sdk client at 2026-07-28 (no session; list_changed on
//     subscriptions/listen) and at 2025-11-25 (a session);
//   - mark3labs/mcp-go v1.2.1, which speaks 2026-07-28 when the server does;
//   - the official TypeScript SDK (@modelcontextprotocol/sdk on npm, run
//     under Node 22), which speaks 2025-11-25.

// realClient is one client connected to toolc.
type realClient struct {
	name    string
	list    func() ([]string, error)
	call    func() (string, error) // svc_echo {"message": "hi"}
	ask     func() (string, error) // svc_ask, answering the name Ada
	changed chan struct{}          // a list_changed notification arrived
}

func (c *realClient) notify() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// goSDKClient connects a go-sdk client that asks for revision.
func goSDKClient(t *testing.T, revision string, transport mcp.Transport) *realClient {
	t.Helper()
	c := &realClient{name: "go-sdk " + revision, changed: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolc-real-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.notify() },
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	t.Cleanup(func() { session.Close() })
	if got := session.InitializeResult().ProtocolVersion; got != revision {
		t.Errorf("%s speaks %s", c.name, got)
	}
	c.list = func() ([]string, error) {
		res, err := session.ListTools(context.Background(), nil)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names, nil
	}
	c.call = func() (string, error) {
		res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "svc_echo", Arguments: map[string]any{"message": "hi"}})
		if err != nil {
			return "", err
		}
		return resultText(res), nil
	}
	c.ask = func() (string, error) {
		res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "svc_ask", Arguments: map[string]any{}})
		if err != nil {
			return "", err
		}
		return resultText(res), nil
	}
	return c
}

// mcpGoClient starts and initializes a mark3labs/mcp-go client with its
// default options, and opens a listen stream on a 2026-07-28 connection
// (on a legacy one, notifications come on the session's stream).
func mcpGoClient(t *testing.T, client *mcpgo.Client, wantRevision string) *realClient {
	t.Helper()
	c := &realClient{name: "mcp-go", changed: make(chan struct{}, 1)}
	mcpgo.WithElicitationHandler(answerAda{})(client)
	client.OnNotification(func(n mcpgotypes.JSONRPCNotification) {
		if n.Method == mcpgotypes.MethodNotificationToolsListChanged {
			c.notify()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), devWait)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatalf("mcp-go start: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	var init mcpgotypes.InitializeRequest
	init.Params.ClientInfo = mcpgotypes.Implementation{Name: "toolc-mcp-go", Version: "1"}
	if _, err := client.Initialize(ctx, init); err != nil {
		t.Fatalf("mcp-go initialize: %v", err)
	}
	if got := client.ProtocolVersion(); got != wantRevision {
		t.Errorf("mcp-go speaks %s, want %s", got, wantRevision)
	}
	if mcpgotypes.IsModernProtocol(client.ProtocolVersion()) {
		stop, err := client.ListenAsync(context.Background(), mcpgotypes.SubscriptionFilter{ToolsListChanged: true}, func(err error) {
			t.Errorf("mcp-go listen: %v", err)
		})
		if err != nil {
			t.Fatalf("mcp-go listen: %v", err)
		}
		t.Cleanup(stop)
	}
	c.list = func() ([]string, error) {
		res, err := client.ListTools(context.Background(), mcpgotypes.ListToolsRequest{})
		if err != nil {
			return nil, err
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names, nil
	}
	callTool := func(name string, args map[string]any) (string, error) {
		var req mcpgotypes.CallToolRequest
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := client.CallTool(context.Background(), req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, content := range res.Content {
			if tc, ok := content.(mcpgotypes.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), nil
	}
	c.call = func() (string, error) { return callTool("svc_echo", map[string]any{"message": "hi"}) }
	c.ask = func() (string, error) { return callTool("svc_ask", map[string]any{}) }
	return c
}

// answerAda is mcp-go's elicitation handler: the user's name is Ada.
type answerAda struct{}

func (answerAda) Elicit(context.Context, mcpgotypes.ElicitationRequest) (*mcpgotypes.ElicitationResult, error) {
	return &mcpgotypes.ElicitationResult{ElicitationResponse: mcpgotypes.ElicitationResponse{
		Action: mcpgotypes.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada"},
	}}, nil
}

// tsSDK returns the node binary and the @modelcontextprotocol/sdk package
// that scripts/test installs and names in TOOLC_NODE and TOOLC_TS_SDK, or
// skips the test when they are not there: CI always has them.
func tsSDK(t *testing.T) (node, sdk string) {
	node, sdk = os.Getenv("TOOLC_NODE"), os.Getenv("TOOLC_TS_SDK")
	if (node == "" || sdk == "") && os.Getenv("TOOLC_REQUIRE_NODE") != "" {
		t.Fatal("TOOLC_REQUIRE_NODE is set, but TOOLC_NODE or TOOLC_TS_SDK is not; scripts/conformance writes them to .cache/conformance/clients.env")
	}
	if node == "" || sdk == "" {
		t.Skip("the TypeScript SDK client needs TOOLC_NODE (Node 22) and TOOLC_TS_SDK (the @modelcontextprotocol/sdk package directory); scripts/test installs both and sets them")
	}
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		t.Fatalf("TOOLC_TS_SDK: %v", err)
	}
	return node, sdk
}

// tsClient runs testdata/tsclient.mjs with args: a URL, or a command that
// speaks MCP on stdio. The script lists and calls at once, and lists again
// on list_changed; its steps arrive as JSON lines.
func tsClient(t *testing.T, dir string, args ...string) *realClient {
	t.Helper()
	node, sdk := tsSDK(t)
	script, err := filepath.Abs("testdata/tsclient.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TOOLC_TS_SDK="+sdk, "TOOLC_CACHE="+t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the TypeScript client's stderr:\n%s", stderr)
		}
	})
	type event struct {
		Event, Text, Message, Protocol string
		Tools                          []string
		IsError                        bool
	}
	events := make(chan event, 8)
	go func() {
		defer close(events)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			var e event
			if json.Unmarshal(lines.Bytes(), &e) == nil {
				events <- e
			}
		}
	}()
	next := func(want string) (event, error) {
		select {
		case e, ok := <-events:
			switch {
			case !ok:
				return e, fmt.Errorf("the TypeScript client ended before %q", want)
			case e.Event == "error":
				return e, fmt.Errorf("the TypeScript client: %s", e.Message)
			case e.Event != want:
				return e, fmt.Errorf("the TypeScript client said %q, want %q", e.Event, want)
			}
			return e, nil
		case <-time.After(devWait):
			return event{}, fmt.Errorf("the TypeScript client did not say %q", want)
		}
	}
	c := &realClient{name: "typescript-sdk", changed: make(chan struct{}, 1)}
	var (
		mu    sync.Mutex
		after []string // the list after list_changed
	)
	c.list = func() ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		if after != nil {
			return after, nil
		}
		e, err := next("listed")
		return e.Tools, err
	}
	c.call = func() (string, error) {
		e, err := next("called")
		if err == nil && e.IsError {
			err = fmt.Errorf("tool error: %s", e.Text)
		}
		// From here the script waits for list_changed.
		go func() {
			e, err := next("changed")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			after = e.Tools
			mu.Unlock()
			c.notify()
		}()
		return e.Text, err
	}
	// After list_changed the script calls svc_ask, answering its
	// elicitation.
	c.ask = func() (string, error) {
		e, err := next("asked")
		if err == nil && e.IsError {
			err = fmt.Errorf("tool error: %s", e.Text)
		}
		return e.Text, err
	}
	return c
}

// exerciseRealClients lists and calls through every client, then edits the
// contract of toolc dev's project to add a tool, and checks that every
// client is told and lists it.
func exerciseRealClients(t *testing.T, dir string, clients []*realClient) {
	t.Helper()
	before := []string{"svc_echo", "svc_slow"}
	for _, c := range clients {
		names, err := c.list()
		slices.Sort(names)
		if err != nil || !slices.Equal(names, before) {
			t.Fatalf("%s: tools/list = %v, %v; want %v", c.name, names, err, before)
		}
		if got, err := c.call(); err != nil || got != "v1:hi" {
			t.Errorf("%s: svc_echo = %q, %v; want v1:hi", c.name, got, err)
		}
	}
	// Nothing changed yet: a stdio client, which connects while the
	// first load runs, is not told of the tools that load brings (go-sdk
	// sends list_changed 10 ms after a change).
	time.Sleep(300 * time.Millisecond)
	for _, c := range clients {
		select {
		case <-c.changed:
			t.Errorf("%s: notifications/tools/list_changed before anything changed", c.name)
		default:
		}
	}
	contract := filepath.Join(dir, "api", "svc.cue")
	writeDevFile(t, contract, mustReplace(t, readDevFile(t, contract), devSlowTool, "\t\t"+devShoutTool+"\t\t"+devAskTool+devSlowTool))
	after := []string{"svc_ask", "svc_echo", "svc_shout", "svc_slow"}
	for _, c := range clients {
		// A client lists on each list_changed until the reload's tools
		// are there.
		deadline := time.After(devWait)
		for {
			select {
			case <-c.changed:
			case <-deadline:
				t.Fatalf("%s: no notifications/tools/list_changed after the reload", c.name)
			}
			names, err := c.list()
			slices.Sort(names)
			if err == nil && slices.Equal(names, after) {
				break
			}
			if err != nil || !slices.Equal(names, before) {
				t.Fatalf("%s: tools/list after a list_changed = %v, %v; want %v or %v", c.name, names, err, before, after)
			}
		}
		// The elicitation round trip.
		if got, err := c.ask(); err != nil || got != "v1:Hello, Ada" {
			t.Errorf("%s: svc_ask = %q, %v; want v1:Hello, Ada", c.name, got, err)
		}
	}
}

// devAskTool is the contract of the project's ask handler.
const devAskTool = `ask: {
			description: "Ask the user's name, then greet them"
			request: fields: {}
		}
`

func TestRealClientsHTTP(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	s := startDev(t, dir)
	mcpGoHTTP, err := mcpgo.NewStreamableHttpClient(s.url)
	if err != nil {
		t.Fatal(err)
	}
	clients := []*realClient{
		goSDKClient(t, "2026-07-28", &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}),
		goSDKClient(t, "2025-11-25", &mcp.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1}),
		mcpGoClient(t, mcpGoHTTP, "2026-07-28"),
	}
	if os.Getenv("TOOLC_NODE") != "" || os.Getenv("TOOLC_TS_SDK") != "" || os.Getenv("TOOLC_REQUIRE_NODE") != "" {
		clients = append(clients, tsClient(t, dir, s.url))
	} else {
		t.Log("no TypeScript SDK client: TOOLC_NODE and TOOLC_TS_SDK are not set (scripts/test sets them)")
	}
	exerciseRealClients(t, dir, clients)
}

// TestRealClientsStdio: each client starts its own toolc dev --stdio on
// the one project, and each process reloads on the one edit. The clients
// connect at once, with their default options: toolc dev answers the
// handshake while its first build runs (mcp-go gives up on a discover
// probe after 5 s), and holds tools/list until it is over.
func TestRealClientsStdio(t *testing.T) {
	t.Parallel()
	dir := newDevProject(t)
	dev := func(stderr io.Writer) *exec.Cmd {
		cmd := exec.Command(toolcBin, "dev", "--stdio", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TOOLC_CACHE="+t.TempDir())
		cmd.Stderr = stderr
		return cmd
	}
	mcpGoStderr := &lockedBuffer{}
	mcpGoStdio := mcpgo.NewClient(mcpgotransport.NewStdioWithOptions(toolcBin, nil, []string{"dev", "--stdio", "./..."},
		mcpgotransport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			return dev(mcpGoStderr), nil
		})))
	clients := []*realClient{
		goSDKClient(t, "2026-07-28", &mcp.CommandTransport{Command: dev(io.Discard)}),
		goSDKClient(t, "2025-11-25", &mcp.CommandTransport{Command: dev(io.Discard)}),
		mcpGoClient(t, mcpGoStdio, "2026-07-28"),
	}
	if os.Getenv("TOOLC_NODE") != "" || os.Getenv("TOOLC_TS_SDK") != "" || os.Getenv("TOOLC_REQUIRE_NODE") != "" {
		clients = append(clients, tsClient(t, dir, toolcBin, "dev", "--stdio", "./..."))
	} else {
		t.Log("no TypeScript SDK client: TOOLC_NODE and TOOLC_TS_SDK are not set (scripts/test sets them)")
	}
	exerciseRealClients(t, dir, clients)
}
