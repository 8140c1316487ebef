package lock_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/lock"
)

// TestReport: each change becomes the diagnostic that toolc diff prints,
// toolc lock names the breaking ones it accepts, and Tally counts them.
func TestReport(t *testing.T) {
	changes := []lock.Change{
		{Rule: "field-removed", Breaking: true, Service: "s", Tool: "t", Field: "f", Message: "gone", Pos: catalog.Pos{File: "s/s.cue", Line: 3, Column: 5}},
		{Rule: "tool-removed", Breaking: true, Allowed: true, Service: "s", Tool: "u", Message: "allowed"},
		{Rule: "field-added-optional", Service: "s", Tool: "t", Field: "g", Message: "new"},
	}
	ds := lock.Diagnostics(changes)
	want := []struct {
		kind string
		sev  diag.Severity
	}{{"breaking", diag.Error}, {"allowed", diag.Warning}, {"compatible", diag.Notice}}
	for i, d := range ds {
		if d.Change.Kind != want[i].kind || d.Severity != want[i].sev || d.Rule != changes[i].Rule || d.Message != changes[i].Message {
			t.Errorf("change %d: %+v, want kind %s, severity %s", i, d, want[i].kind, want[i].sev)
		}
	}
	if p := ds[0].Pos; p != (diag.Position{File: "s/s.cue", Line: 3, Column: 5}) || ds[0].Change.Field != "f" {
		t.Errorf("change 0 lost its position or field: %+v", ds[0])
	}
	acc := lock.Accepted(changes)
	if len(acc) != 1 || acc[0].Change.Kind != "accepted" || acc[0].Rule != "field-removed" {
		t.Errorf("Accepted = %+v, want the one breaking change, as accepted", acc)
	}
	if b, a, c := lock.Tally(changes); b != 1 || a != 1 || c != 1 {
		t.Errorf("Tally = %d, %d, %d; want 1, 1, 1", b, a, c)
	}
}

// TestUpdate: a lock is written when it changed, and otherwise left alone
// (its modification time too); LoadIfExists reads it back, and no file is
// no lock; Keep keeps the services the patterns leave out.
func TestUpdate(t *testing.T) {
	name := filepath.Join(t.TempDir(), lock.FileName)
	if l, err := lock.LoadIfExists(name); l != nil || err != nil {
		t.Fatalf("LoadIfExists of no file = %v, %v", l, err)
	}
	l := lock.FromCatalog(testCatalog())
	if wrote, err := l.Update(name); !wrote || err != nil {
		t.Fatalf("Update of no file = %v, %v", wrote, err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
	if wrote, err := l.Update(name); wrote || err != nil {
		t.Fatalf("Update of the same lock = %v, %v", wrote, err)
	}
	if fi, err := os.Stat(name); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("Update of the same lock touched the file: %v", err)
	}
	back, err := lock.LoadIfExists(name)
	if err != nil || back.NumTools() != 3 {
		t.Fatalf("LoadIfExists = %v tools, %v; want 3", back, err)
	}
	billing := lock.FromCatalog(&catalog.Catalog{Services: testCatalog().Services[1:]})
	billing.Keep(back, "", []string{"./billing"})
	if len(billing.Services) != 2 || billing.NumTools() != 3 {
		t.Errorf("Keep: %d services, %d tools; want weather-service kept beside billing", len(billing.Services), billing.NumTools())
	}
}
