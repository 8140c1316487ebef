package baseline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/lock"
)

func testCatalog(dir string) *catalog.Catalog {
	return &catalog.Catalog{Services: []*catalog.Service{{
		Name: "notes", Version: "1.0.0", Description: "Notes", Dir: dir, Handler: ".",
		Tools: []*catalog.Tool{{Name: "add_note", Description: "Add a note", Request: catalog.Message{Fields: []*catalog.Field{}}}},
	}}}
}

// TestLoadFiles reads toolc.lock by default, a lock file and a catalog
// file by name, the catalog's directories made relative to the working
// directory again; and says what a name is when it is neither a file nor
// a revision.
func TestLoadFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := context.Background()
	if _, err := Load(ctx, "", nil); err == nil || !strings.Contains(err.Error(), "no toolc.lock here") {
		t.Errorf("Load without a lock: %v", err)
	}
	if err := lock.FromCatalog(testCatalog("notes")).WriteFile(lock.FileName); err != nil {
		t.Fatal(err)
	}
	b, err := Load(ctx, "", nil)
	if err != nil || b.Label != lock.FileName || len(b.Lock.Services) != 1 || len(b.Notes) > 0 {
		t.Fatalf("Load of toolc.lock = %+v, %v", b, err)
	}
	cat := testCatalog("../../notes") // as toolc build -o dist/out/x.json writes it
	os.MkdirAll(filepath.Join("dist", "out"), 0o755)
	if err := cat.WriteFile(filepath.Join("dist", "out", "x.json")); err != nil {
		t.Fatal(err)
	}
	b, err = Load(ctx, filepath.Join("dist", "out", "x.json"), nil)
	if err != nil || len(b.Lock.Services) != 1 || b.Lock.Services[0].Dir != "notes" {
		t.Fatalf("Load of a catalog file = %+v, %v; want the service in notes", b, err)
	}
	os.Mkdir("adir", 0o755)
	for name, want := range map[string]string{
		"missing.lock": "--against missing.lock: no such file, and ",
		"adir":         "--against adir: a directory, not a lock file or a catalog file, and ",
	} {
		if _, err := Load(ctx, name, nil); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Load(%q) = %v, want an error starting %q", name, err, want)
		}
	}
}
