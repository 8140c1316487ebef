package rpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// askAnswers answers the toolbox's ask tool's three questions, as a client
// would: each answer carries the hash of the question it answers.
func askAnswers(qs []plugins.InputRequest) []plugins.Answer {
	results := map[string]string{
		"name": `{"action":"accept","content":{"name":"Ada"}}`,
		"poem": `{"role":"assistant","model":"m","content":{"type":"text","text":"old pond"}}`,
		"dirs": `{"roots":[{"uri":"file:///src","name":"src"}]}`,
	}
	var out []plugins.Answer
	for _, q := range qs {
		out = append(out, plugins.Answer{ID: q.ID, ParamsSHA256: q.ParamsHash(), Result: json.RawMessage(results[q.ID])})
	}
	return out
}

func callWith(t *testing.T, c *Client, tool string, in *plugins.Input) *plugins.Result {
	t.Helper()
	ctx := context.Background()
	if in != nil {
		ctx = plugins.WithInput(ctx, in)
	}
	res, err := c.Call(ctx, tool, "c", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAskAcrossTheBoundary runs a handler's questions through a plugin: the
// first round ends with all three questions, the second, with the answers,
// finishes; an answer given for another question does not reach it.
func TestAskAcrossTheBoundary(t *testing.T) {
	c, _ := startToolbox(t)
	caps := plugins.Input{Elicitation: true, Sampling: true, Roots: true}

	in := caps
	res := callWith(t, c, "ask", &in)
	var got []string
	for _, q := range res.InputRequests {
		got = append(got, q.ID+" "+q.Method)
	}
	want := []string{"name elicitation/create", "poem sampling/createMessage", "dirs roots/list"}
	if !reflect.DeepEqual(got, want) || len(res.Content) != 0 || res.IsError {
		t.Fatalf("round 1 = %+v; want the questions %v and nothing else", res, want)
	}
	var form map[string]any
	if err := json.Unmarshal(res.InputRequests[0].Params, &form); err != nil || form["message"] != "Your name?" || form["mode"] != "form" {
		t.Errorf("elicitation params %s", res.InputRequests[0].Params)
	}

	in = caps
	in.Answers = askAnswers(res.InputRequests)
	if done := callWith(t, c, "ask", &in); text(done) != "name=Ada poem=old pond roots=1 file:///src" || len(done.InputRequests) != 0 {
		t.Errorf("round 2 = %+v", done)
	}

	// The same answers under hashes of other questions answer nothing.
	in = caps
	in.Answers = askAnswers(res.InputRequests)
	for i := range in.Answers {
		in.Answers[i].ParamsSHA256 = plugins.InputRequest{Params: []byte(`{"message":"another question"}`)}.ParamsHash()
	}
	if again := callWith(t, c, "ask", &in); len(again.InputRequests) != 3 {
		t.Errorf("answers to other questions: %+v, want the three questions again", again)
	}
}

func TestAskWithoutTheCapability(t *testing.T) {
	c, _ := startToolbox(t)
	// Sampling and roots, but no elicitation: the handler returns the
	// ask's error, and the host learns which capability was missing.
	for _, in := range []*plugins.Input{{Sampling: true, Roots: true}, nil} {
		res := callWith(t, c, "ask", in)
		if res.MissingCapability != "elicitation" || !res.IsError || len(res.InputRequests) != 0 {
			t.Errorf("input %+v: %+v, want MissingCapability elicitation", in, res)
		}
	}
}

// TestAskProtocolVersions: a host of version 3 sends no Input to an older
// plugin, and a plugin of version 3 under an older host finds no client to
// ask, and never sends questions that host would misread.
func TestAskProtocolVersions(t *testing.T) {
	for _, v := range []string{"1", "2", "3"} {
		c, _ := startToolbox(t, func(cfg *ClientConfig) { cfg.Path, cfg.Args = filepath.Join(bin, "raw"), []string{"-protocol", v} })
		res := callWith(t, c, "say", &plugins.Input{Elicitation: true})
		sent := len(res.Content) == 2 && res.Content[1].Text == "input"
		if sent != (v == "3") {
			t.Errorf("plugin of version %s: Input sent %t", v, sent)
		}
	}
	for _, version := range []int{1, 2} {
		rpc, _ := dialToolbox(t, version)
		stream, err := rpc.Call(context.Background(), &pb.CallRequest{Tool: "ask", ArgumentsJson: []byte(`{}`),
			Input: &pb.Input{Elicitation: true, Sampling: true, Roots: true}})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		r := ev.GetResult()
		if !r.IsError || len(r.InputRequests) != 0 || r.MissingCapability != "" || !strings.Contains(r.Content[0].GetText().GetText(), "cannot ask") {
			t.Errorf("host of version %d: %v, want a tool error and no questions", version, r)
		}
	}
}
