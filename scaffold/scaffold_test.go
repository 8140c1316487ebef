package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReleased(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    bool
	}{
		{"v1.2.0", true},
		{"v0.3.0-rc.1", true},
		{"", false},
		{"(devel)", false},
		// go build in a checkout between tags stamps a pseudo-version of a
		// commit that may never have been pushed, and +dirty when files
		// are modified: neither is a version go mod tidy can fetch.
		{"v0.0.0-20261201094424-a2f9731d92d4", false},
		{"v0.0.0-20261201094424-a2f9731d92d4+dirty", false},
		{"v1.2.1-0.20261201094424-a2f9731d92d4", false},
		{"v1.2.0+dirty", false},
	} {
		if got := released(tc.version); got != tc.want {
			t.Errorf("released(%q) = %v, want %v", tc.version, got, tc.want)
		}
	}
}

func TestFindSDK(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// This test binary is built from the checkout, without -trimpath.
	if sdk, err := FindSDK(""); err != nil || sdk != (SDK{Version: "v0.0.0", Dir: root}) {
		t.Errorf("FindSDK() in a checkout = %+v, %v; want the checkout %s", sdk, err, root)
	}
	if sdk, err := FindSDK(".."); err != nil || sdk != (SDK{Version: "v0.0.0", Dir: root}) {
		t.Errorf("FindSDK(..) = %+v, %v; want %s made absolute", sdk, err, root)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		other:                       `its go.mod is module "example.com/other", not github.com/toolc/toolc`,
		filepath.Join(other, "nil"): "not a toolc checkout",
	} {
		if _, err := FindSDK(dir); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--sdk "+dir+": ") {
			t.Errorf("FindSDK(%s) = %v, want an error saying %q", dir, err, want)
		}
	}
}

// TestNoSDK: a development build without its checkout says how to give
// one and install toolc from it, not go install ...@latest, which cannot
// work while toolc is not published.
func TestNoSDK(t *testing.T) {
	msg := noSDK("").Error()
	for _, want := range []string{"(devel)", "--sdk DIR", "go -C DIR install ./cmd/toolc", "$(go env GOPATH)/bin", "on PATH"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "@latest") {
		t.Errorf("the message offers go install ...@latest, which cannot work: %s", msg)
	}
}

func TestNextSteps(t *testing.T) {
	checkout := SDK{Version: "v0.0.0", Dir: "/src/toolc"}
	release := SDK{Version: "v1.2.0"}
	for _, tc := range []struct {
		name      string
		dir       string
		sdk       SDK
		enclosing string
		want      []string // the commands between cd and toolc check
	}{
		{"new module, checkout", "my-tools", checkout, "", []string{"go mod tidy"}},
		{"new module, release", "my-tools", release, "", []string{"go mod tidy"}},
		{"inside another module, checkout", "tools", checkout, "example.com/app", []string{"go mod edit -replace github.com/toolc/toolc=/src/toolc", "go mod tidy"}},
		{"inside another module, release", "tools", release, "example.com/app", []string{"go get github.com/toolc/toolc@v1.2.0", "go mod tidy"}},
		{"inside toolc", "examples/mine", checkout, ModulePath, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", "") // toolc not on PATH ...
			steps := nextSteps(tc.dir, tc.sdk, tc.enclosing)
			var got []string
			for _, s := range steps {
				got = append(got, s.Command)
			}
			want := []string{"cd " + tc.dir}
			if tc.sdk.Dir != "" { // ... so a checkout's toolc is installed first
				want = append([]string{"go -C /src/toolc install ./cmd/toolc"}, want...)
			}
			want = append(append(want, tc.want...), "toolc check ./...", "toolc dev ./...")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"my-tools":        "my-tools",
		"/src/toolc@v1":   "/src/toolc@v1",
		"my tools":        "'my tools'",
		"it's":            `'it'\''s'`,
		"":                "''",
		"$(rm -rf ~)":     "'$(rm -rf ~)'",
		"a/b_c.d=e:f+g,h": "a/b_c.d=e:f+g,h",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestInitWritesNothingOverAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tools_gen.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(dir, SDK{Version: "v1.2.0"}); err == nil || !strings.Contains(err.Error(), "tools_gen.go; not overwriting") {
		t.Fatalf("Init over tools_gen.go = %v, want a refusal", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Init wrote %d files beside the one it refused to overwrite", len(entries)-1)
	}
}
