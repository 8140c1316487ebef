package dev

import (
	"errors"
	"strings"
	"testing"
)

// TestBrief: what a client is told of a failed reload is bounded, and says
// where the rest is; a short reason is told whole.
func TestBrief(t *testing.T) {
	long := "building the handler of service \"svc\": exit status 1\n" + strings.Repeat("./main.go:1:1: undefined: x\n", 100)
	for _, tc := range []struct {
		in        string
		want, not string
	}{
		{in: "the contracts have 1 error: api/svc.cue:9:3: ...", want: "the contracts have 1 error: api/svc.cue:9:3: ...", not: "standard error"},
		{in: long, want: "... (toolc dev's standard error has the rest)"},
		{in: strings.Repeat("é", 3000), want: "... (toolc dev's standard error has the rest)"},
	} {
		got := brief(errors.New(tc.in)).Error()
		if !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) || len(got) > 2100 || strings.Count(got, "\n") > 12 {
			t.Errorf("brief(%.40q...) = %.200q (%d bytes)", tc.in, got, len(got))
		}
		if !strings.HasPrefix(tc.in, strings.TrimSuffix(strings.SplitN(got, "\n...", 2)[0], "\n")) {
			t.Errorf("brief(%.40q...) does not begin as its error does", tc.in)
		}
	}
	if brief(nil) != nil {
		t.Error("brief(nil) != nil")
	}
}
