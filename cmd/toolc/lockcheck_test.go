package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockCheckScript runs scripts/lockcheck, which scripts/test (so CI)
// runs on this repository, against a project whose toolc.lock is current
// and then stale in each way that toolc check lets through: a compatible
// change, a new tool, a version bump, and no lock at all. It must pass the
// first and fail the others, saying that the lock is stale, and never
// write the project's lock itself.
func TestLockCheckScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("scripts/lockcheck is a bash script")
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "lockcheck"))
	if err != nil {
		t.Fatal(err)
	}
	lockcheck := func(dir string) (string, int) {
		t.Helper()
		cmd := exec.Command(script, dir)
		cmd.Env = append(os.Environ(), "TOOLC="+toolcBin)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return string(out), exit.ExitCode()
		case err != nil:
			t.Fatalf("scripts/lockcheck: %v\n%s", err, out)
		}
		return string(out), 0
	}
	const contract = "api/svc.cue"
	for _, tc := range []struct {
		name string
		// edit changes the project after toolc lock; old and new replace
		// a piece of the contract, and an empty old removes the lock.
		old, new string
		// says is what the script's output must say besides that the lock
		// is stale.
		says string
	}{
		{name: "current"},
		{name: "a compatible change", old: `"Echo a message back"`, new: `"Echo the message back"`,
			says: `compatible: description of tool "echo" changed [description-changed]`},
		{name: "a new tool", old: "\t\tslow: {", new: "\t\t" + `shout: {description: "Shout it", request: fields: {}}` + "\n\t\tslow: {",
			says: `compatible: tool "shout" was added to service "svc" [tool-added]`},
		{name: "a version bump", old: `version:     "1.0.0"`, new: `version:     "1.1.0"`,
			says: `+      "version": "1.1.0",`},
		{name: "no lock", says: "has no toolc.lock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newDevProject(t)
			if r := toolc(t, dir, "lock"); r.status != 0 {
				t.Fatalf("toolc lock: %d\n%s", r.status, r.stderr)
			}
			lockPath := filepath.Join(dir, "toolc.lock")
			switch {
			case tc.old != "":
				src := readDevFile(t, filepath.Join(dir, contract))
				writeDevFile(t, filepath.Join(dir, contract), mustReplace(t, src, tc.old, tc.new))
				if r := toolc(t, dir, "check"); r.status != 0 {
					t.Fatalf("toolc check fails on the edit, so it would catch it itself: %d\n%s%s", r.status, r.stdout, r.stderr)
				}
			case tc.says != "":
				if err := os.Remove(lockPath); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(lockPath)
			out, status := lockcheck(dir)
			if tc.says == "" {
				if status != 0 || !strings.Contains(out, "toolc.lock is up to date") {
					t.Errorf("scripts/lockcheck on a current lock: exit %d\n%s", status, out)
				}
				return
			}
			if status != 1 || !strings.Contains(out, tc.says) {
				t.Errorf("scripts/lockcheck: exit %d, want 1 and output saying %q:\n%s", status, tc.says, out)
			}
			if tc.old != "" && !strings.Contains(out, "toolc.lock is stale: toolc lock would change it. Run toolc lock") {
				t.Errorf("scripts/lockcheck does not say that the lock is stale and what to do:\n%s", out)
			}
			if after, _ := os.ReadFile(lockPath); string(after) != string(before) {
				t.Errorf("scripts/lockcheck changed the project's toolc.lock")
			}
		})
	}
}
