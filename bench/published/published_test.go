package published_test

import (
	"testing"

	"github.com/toolc/toolc/bench/published"
)

func TestLoad(t *testing.T) {
	servers, err := published.Load()
	if err != nil {
		t.Fatal(err)
	}
	tools := 0
	for _, s := range servers {
		for _, tl := range s.Tools {
			if tl.Name == "" || len(tl.InputSchema) == 0 {
				t.Errorf("%s@%s: a tool without a name or an inputSchema: %+v", s.Package, s.Version, tl)
			}
		}
		tools += len(s.Tools)
	}
	if len(servers) < 20 || tools < 400 {
		t.Errorf("%d servers, %d tools: the corpus lost servers", len(servers), tools)
	}
	t.Logf("%d servers, %d tools", len(servers), tools)
}
