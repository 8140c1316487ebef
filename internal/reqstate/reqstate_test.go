package reqstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func mustKey(t testing.TB, secret string) *Key {
	t.Helper()
	k, err := NewKey([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const secretA = "0123456789abcdef0123456789abcdef-a"

func TestRoundTrip(t *testing.T) {
	k := mustKey(t, secretA)
	now := time.Unix(1_800_000_000, 0)
	args := ArgsDigest(json.RawMessage(`{"b":1,"a":"x"}`))
	in := &State{Tool: "svc_tool", Args: args, Expires: now.Add(time.Minute).Unix(),
		Asked:   []Question{{ID: "q", Method: "elicitation/create", Params: []byte{1, 2}}},
		Answers: []Answer{{ID: "p", Params: []byte{3}, Result: json.RawMessage(`{"action":"accept"}`)}}}
	token, err := k.Seal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(token, "accept") || strings.Contains(token, "svc_tool") {
		t.Errorf("the state is readable: %s", token)
	}
	// Another replica with the same secret opens it, and key order or
	// spacing in the arguments does not matter.
	out, err := mustKey(t, secretA).Open(token, "svc_tool", ArgsDigest(json.RawMessage(`{ "a":"x", "b":1 }`)), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if out.Tool != in.Tool || len(out.Asked) != 1 || out.Asked[0].ID != "q" || string(out.Answers[0].Result) != `{"action":"accept"}` {
		t.Errorf("opened %+v, sealed %+v", out, in)
	}
}

func TestOpenRefuses(t *testing.T) {
	k := mustKey(t, secretA)
	now := time.Unix(1_800_000_000, 0)
	args := ArgsDigest(json.RawMessage(`{"n":1}`))
	good, err := k.Seal(&State{Tool: "t", Args: args, Expires: now.Add(time.Minute).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := mustKey(t, "another secret of thirty-two bytes or more").Seal(&State{Tool: "t", Args: args, Expires: now.Add(time.Minute).Unix()})
	alice, bob := CallerDigest("alice", "app"), CallerDigest("bob", "app")
	alices, _ := k.Seal(&State{Tool: "t", Args: args, Caller: alice, Expires: now.Add(time.Minute).Unix()})
	if s, err := k.Open(alices, "t", args, alice, now); err != nil || s == nil {
		t.Fatalf("Open of alice's state by alice = %v, %v", s, err)
	}
	flipped := []byte(good)
	// Another base64 letter in the middle: still decodes, no longer opens.
	if flipped[len(flipped)/2] == 'A' {
		flipped[len(flipped)/2] = 'B'
	} else {
		flipped[len(flipped)/2] = 'A'
	}
	for _, tc := range []struct {
		name, token, tool string
		args, caller      []byte
		at                time.Time
		want              error
	}{
		{"tampered suffix", good + "-TAMPERED", "t", args, nil, now, ErrForged},
		{"one byte changed", string(flipped), "t", args, nil, now, ErrForged},
		{"another key", other, "t", args, nil, now, ErrForged},
		{"expired", good, "t", args, nil, now.Add(time.Minute), ErrExpired},
		{"another tool", good, "u", args, nil, now, ErrMismatch},
		{"other arguments", good, "t", ArgsDigest(json.RawMessage(`{"n":2}`)), nil, now, ErrMismatch},
		{"too large", "v1." + strings.Repeat("A", MaxSize), "t", args, nil, now, ErrTooLarge},
		{"no version", strings.TrimPrefix(good, "v1."), "t", args, nil, now, ErrFormat},
		{"empty body", "v1.", "t", args, nil, now, ErrFormat},
		{"short", "v1.AAAA", "t", args, nil, now, ErrFormat},
		{"another caller", alices, "t", args, bob, now, ErrCaller},
		{"another client of the same user", alices, "t", args, CallerDigest("alice", "other-app"), now, ErrCaller},
		{"no caller, for a caller's state", alices, "t", args, nil, now, ErrCaller},
		{"a caller, for a state of none", good, "t", args, alice, now, ErrCaller},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := k.Open(tc.token, tc.tool, tc.args, tc.caller, tc.at)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalid) || s != nil {
				t.Errorf("Open = %v, %v; want %v", s, err, tc.want)
			}
		})
	}
}

func TestSealBoundsSize(t *testing.T) {
	k := mustKey(t, secretA)
	big := json.RawMessage(`"` + strings.Repeat("x", MaxSize) + `"`)
	_, err := k.Seal(&State{Tool: "t", Answers: []Answer{{ID: "a", Result: big}}})
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("Seal of a state over MaxSize = %v", err)
	}
}

func TestNewKeyNeedsALongSecret(t *testing.T) {
	if _, err := NewKey([]byte("short")); err == nil {
		t.Error("NewKey accepted a 5-byte secret")
	}
	a, b := GenerateSecret(), GenerateSecret()
	if len(a) != MinSecret || bytes.Equal(a, b) {
		t.Errorf("GenerateSecret = %x, %x", a, b)
	}
}

func TestArgsDigestKeepsLargeNumbers(t *testing.T) {
	// 2^53+1 and 2^53 are one float64; as arguments they differ.
	if bytes.Equal(ArgsDigest(json.RawMessage(`{"n":9007199254740993}`)), ArgsDigest(json.RawMessage(`{"n":9007199254740992}`))) {
		t.Error("two different integers digest the same")
	}
}

func TestLoadSecret(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good.key"
	short := dir + "/short.key"
	os.WriteFile(good, []byte("  "+secretA+"\n"), 0o600)
	os.WriteFile(short, []byte("tiny\n"), 0o600)
	for _, tc := range []struct {
		file, env, want, err string
	}{
		{"", "", "", ""},
		{"", secretA, secretA, ""},
		{good, "ignored when a file is given", secretA, ""},
		{short, secretA, "", "fewer than 32"},
		{"", "tiny", "", "$TOOLC_STATE_KEY has 4 bytes"},
		{dir + "/missing.key", "", "", "no such file"},
	} {
		got, err := LoadSecret(tc.file, tc.env)
		if string(got) != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("LoadSecret(%q, %q) = %q, %v; want %q, %q", tc.file, tc.env, got, err, tc.want, tc.err)
		}
	}
}

// FuzzOpen: whatever a client sends as a requestState, Open refuses it
// with ErrInvalid (or opens a real one), and never panics.
func FuzzOpen(f *testing.F) {
	k := mustKey(f, secretA)
	now := time.Unix(1_800_000_000, 0)
	good, _ := k.Seal(&State{Tool: "t", Expires: now.Add(time.Minute).Unix()})
	for _, s := range []string{good, good + "x", "v1.", "v1.====", "", "v2." + good[3:], strings.Repeat("v1.", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		s, err := k.Open(token, "t", nil, nil, now)
		if err != nil && (!errors.Is(err, ErrInvalid) || s != nil) {
			t.Errorf("Open(%q) = %v, %v", token, s, err)
		}
		// (The fuzzing workers seal their own good token, under the same
		// key: an accepted token can only be such a one.)
		if err == nil && (s == nil || s.Tool != "t") {
			t.Errorf("Open(%q) = %+v", token, s)
		}
	})
}
