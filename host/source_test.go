package host

import (
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
)

// TestSourceOnly: toolc call narrows what it builds and starts to the
// service of the tool it names, by function name or MCP name, with that
// service's binaries only.
func TestSourceOnly(t *testing.T) {
	notes := &catalog.Service{Name: "notes", Tools: []*catalog.Tool{{Name: "add_note"}, {Name: "find_notes"}}}
	weather := &catalog.Service{Name: "weather", Tools: []*catalog.Tool{{Name: "forecast"}}}
	src := &Source{Catalog: &catalog.Catalog{Services: []*catalog.Service{notes, weather}},
		Binaries: []*Binary{{Service: "notes"}, {Service: "weather"}}, Base: "base"}
	for _, tc := range []struct{ tool, service string }{
		{"find_notes", "notes"},
		{"notes_find_notes", "notes"},
		{"forecast", "weather"},
		{"weather_forecast", "weather"},
		{"nope", ""},
	} {
		one := src.Only(tc.tool)
		if tc.service == "" {
			if one != nil {
				t.Errorf("Only(%q) = %v, want nil", tc.tool, one.Catalog.Services)
			}
			continue
		}
		if one == nil || len(one.Catalog.Services) != 1 || one.Catalog.Services[0].Name != tc.service || one.Base != "base" {
			t.Errorf("Only(%q) = %+v, want service %s from base", tc.tool, one, tc.service)
			continue
		}
		if len(one.Binaries) != 1 || one.Binaries[0].Service != tc.service {
			t.Errorf("Only(%q) has binaries %v, want %s's", tc.tool, one.Binaries, tc.service)
		}
	}
}

// TestHandlersBeforeStart: a drain before the load started anything
// stops nothing, and does not wait.
func TestHandlersBeforeStart(t *testing.T) {
	var h Handlers
	start := time.Now()
	h.Stop("drained")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopping nothing took %v", d)
	}
	if h.Upstreams() != nil {
		t.Error("Upstreams before Start is not nil")
	}
}
