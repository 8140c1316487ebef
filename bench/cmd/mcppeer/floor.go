package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"

	"github.com/toolc/toolc/bench/serving/floorplugin"
	"github.com/toolc/toolc/bench/serving/weather"
)

// The floor answers MCP's JSON-RPC with net/http and encoding/json alone:
// it decodes each request, calls the tool, and encodes the answer, with no
// validation, no sessions and nothing else that an MCP library does. No
// MCP server can do less per call, so it is the floor of the comparison.
// With a plugin (package floorplugin) it is the floor of a server whose
// tool runs in a go-plugin process.

type floorRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type floorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *floorError     `json:"error,omitempty"`
}

type floorError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type floorContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type floorCallResult struct {
	Content           []floorContent   `json:"content"`
	StructuredContent weather.Response `json:"structuredContent"`
	IsError           bool             `json:"isError"`
}

// floorPluginResult is a call's result when the tool is in a plugin, whose
// answer is the forecast's JSON.
type floorPluginResult struct {
	Content           []floorContent  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// floorAnswer answers one request, calling the tool in process or, when
// plugin is not nil, in the plugin; nil for a notification.
func floorAnswer(ctx context.Context, req *floorRequest, plugin *floorplugin.Client) *floorResponse {
	if req.ID == nil {
		return nil
	}
	resp := &floorResponse{JSONRPC: "2.0", ID: req.ID}
	switch {
	case req.Method == "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		resp.Result = map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "floor", "version": "1"},
		}
	case req.Method == "tools/list":
		resp.Result = map[string]any{"tools": []any{map[string]any{
			"name": weather.Name, "description": weather.Description, "inputSchema": json.RawMessage(weather.InputSchema),
		}}}
	case req.Method == "tools/call" && plugin != nil:
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name != weather.Name {
			resp.Error = &floorError{Code: -32602, Message: "invalid params"}
			break
		}
		out, err := plugin.Call(ctx, p.Arguments)
		if err != nil {
			resp.Error = &floorError{Code: -32603, Message: err.Error()}
			break
		}
		resp.Result = floorPluginResult{Content: []floorContent{{Type: "text", Text: string(out)}}, StructuredContent: out}
	case req.Method == "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments weather.Request `json:"arguments"`
		}
		p.Arguments = weather.Request{Days: 3, Unit: "celsius"}
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Name != weather.Name {
			resp.Error = &floorError{Code: -32602, Message: "invalid params"}
			break
		}
		out := weather.Answer(p.Arguments)
		text, _ := json.Marshal(out)
		resp.Result = floorCallResult{Content: []floorContent{{Type: "text", Text: string(text)}}, StructuredContent: out}
	case req.Method == "ping":
		resp.Result = map[string]any{}
	default:
		resp.Error = &floorError{Code: -32601, Message: "method not found"}
	}
	return resp
}

func floorHTTP(plugin *floorplugin.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		var req floorRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		resp := floorAnswer(r.Context(), &req, plugin)
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if req.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "floor")
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
}

func floorStdio(ctx context.Context, plugin *floorplugin.Client) error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req floorRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			continue
		}
		if resp := floorAnswer(ctx, &req, plugin); resp != nil {
			if err := enc.Encode(resp); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
				return err
			}
		}
	}
	return in.Err()
}
