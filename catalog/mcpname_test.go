package catalog_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
)

// AI4J's generateApiFunctionName results for ordinary names, which toolc
// keeps so that clients moving from AI4J see the same tool names.
func TestMCPNameAI4J(t *testing.T) {
	tests := []struct{ service, tool, want string }{
		{"weather-service", "query_weather", "weather-service_query_weather"},
		{"weather", "query", "weather_query"},
		{"My Service", "do.it", "My_Service_do_it"},
		{"svc", "a__b", "svc_a_b"},
		{"__svc__", "__x__", "svc_x"},
		{"123", "tool", "tool_123_tool"},
		{"-svc", "t", "tool_-svc_t"},
		{"", "", "tool_"},
		{"ünï", "cødé", "n_c_d"},
	}
	for _, tt := range tests {
		if got := catalog.MCPName(tt.service, tt.tool); got != tt.want {
			t.Errorf("MCPName(%q, %q) = %q, want %q", tt.service, tt.tool, got, tt.want)
		}
	}
}

func TestMCPNameLong(t *testing.T) {
	svc := strings.Repeat("s", 40)
	a := catalog.MCPName(svc, strings.Repeat("t", 30)+"_alpha")
	b := catalog.MCPName(svc, strings.Repeat("t", 30)+"_bravo")
	if len(a) != 64 || len(b) != 64 {
		t.Fatalf("long names have %d and %d characters, want 64", len(a), len(b))
	}
	if a == b {
		t.Errorf("two long names collide: %q", a)
	}
	if a[:55] != b[:55] || !regexp.MustCompile(`^_[0-9a-f]{8}$`).MatchString(a[55:]) {
		t.Errorf("long name %q is not a 55-character prefix, _ and 8 hex digits", a)
	}
	exact := catalog.MCPName(strings.Repeat("s", 31), strings.Repeat("t", 32))
	if exact != strings.Repeat("s", 31)+"_"+strings.Repeat("t", 32) {
		t.Errorf("a name of exactly 64 characters was changed: %q", exact)
	}
}

var validMCPName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// FuzzMCPName checks the properties that hold for every input: at most 64
// characters, only valid characters, a letter first, and deterministic.
func FuzzMCPName(f *testing.F) {
	f.Add("weather-service", "query_weather")
	f.Add("", "")
	f.Add("ü", "\x00\xff")
	f.Add(strings.Repeat("é", 100), strings.Repeat("_", 100))
	f.Fuzz(func(t *testing.T, service, tool string) {
		name := catalog.MCPName(service, tool)
		if !validMCPName.MatchString(strings.TrimSuffix(name, "_")) && name != "tool_" {
			t.Errorf("MCPName(%q, %q) = %q: not a valid MCP name", service, tool, name)
		}
		if len(name) > catalog.MaxMCPName {
			t.Errorf("MCPName(%q, %q) has %d characters", service, tool, len(name))
		}
		if again := catalog.MCPName(service, tool); again != name {
			t.Errorf("MCPName is not deterministic: %q then %q", name, again)
		}
	})
}

// FuzzMCPNameShortcut: the shortcut for ordinary names gives what the
// general algorithm gives.
func FuzzMCPNameShortcut(f *testing.F) {
	for _, s := range []string{"weather-service", "svc", "a", "A-1", "x_y", "-a", "1a", strings.Repeat("s", 40)} {
		for _, t := range []string{"query_weather", "t", "a__b", "_x", "x_", "do-it", "9", strings.Repeat("t", 30)} {
			f.Add(s, t)
		}
	}
	f.Fuzz(func(t *testing.T, service, tool string) {
		if got, want := catalog.MCPName(service, tool), catalog.MCPNameGeneral(service, tool); got != want {
			t.Errorf("MCPName(%q, %q) = %q, the general algorithm gives %q", service, tool, got, want)
		}
	})
}
