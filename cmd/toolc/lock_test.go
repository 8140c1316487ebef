package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolc/toolc/lock"
)

// shopContract is a service with two tools; the tests below edit it.
const shopContract = `package shop

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "shop"
	version:     "1.2.0"
	description: "A shop"
	tools: find_orders: {
		description: "Find a customer's orders"
		request: fields: {
			customer: {type: "string", description: "Customer id", minLength: 2}
			limit: {type: "integer", description: "Most orders to return", required: false, default: 10, maximum: 100}
		}
	}
	tools: cancel_order: {
		description: "Cancel an order"
		request: fields: order_id: {type: "string", description: "Order id"}
	}
}
`

const notesContract = `package notes

import "github.com/toolc/toolc/schema"

schema.#Service & {
	name:        "notes"
	version:     "1.0.0"
	description: "Notes"
	tools: add_note: {
		description: "Add a note"
		request: fields: text: {type: "string", description: "The note"}
	}
}
`

func lockEdit(t *testing.T, dir, file string, pairs ...string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(file))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s has no %q", file, pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLock(t *testing.T, dir string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, lock.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func wantStatus(t *testing.T, r result, status int, what string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.status, status, r.stdout, r.stderr)
	}
}

func wantMatch(t *testing.T, s, pattern, what string) {
	t.Helper()
	if !regexp.MustCompile(pattern).MatchString(s) {
		t.Errorf("%s does not match %s:\n%s", what, pattern, s)
	}
}

// TestLockWorkflow is the workflow of the README: lock, a breaking change
// that check and build reject, and lock again to accept it.
func TestLockWorkflow(t *testing.T) {
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})

	r := toolc(t, dir, "check")
	wantStatus(t, r, exitOK, "check without a lock")

	r = toolc(t, dir, "lock")
	wantStatus(t, r, exitOK, "lock")
	wantMatch(t, r.stderr, `toolc lock: wrote toolc.lock: 1 service, 2 tools\n$`, "lock's stderr")
	first := readLock(t, dir)
	if _, err := lock.Parse(first); err != nil {
		t.Fatalf("the lock does not parse: %v", err)
	}

	r = toolc(t, dir, "lock")
	wantStatus(t, r, exitOK, "lock again")
	wantMatch(t, r.stderr, `toolc.lock is up to date`, "lock's stderr")
	if !bytes.Equal(readLock(t, dir), first) {
		t.Error("a second lock of the same contracts changed the file")
	}

	// A compatible change passes; a breaking one is a stable-name error at
	// the key that made it.
	lockEdit(t, dir, "shop/shop.cue", `description: "Cancel an order"`, `description: "Cancel one order"`)
	wantStatus(t, toolc(t, dir, "check"), exitOK, "check after a compatible change")
	lockEdit(t, dir, "shop/shop.cue", "maximum: 100", "maximum: 50")
	r = toolc(t, dir, "check")
	wantStatus(t, r, exitFail, "check after a breaking change")
	wantMatch(t, r.stdout, `(?m)^shop/shop.cue:13:97: error: maximum of request field "limit" of tool "find_orders" went down from 100 to 50; .*bump the major version of service "shop" to allow it \[stable-name\]$`, "check's output")

	r = toolc(t, dir, "check", "--format", "json")
	var diags []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &diags); err != nil || len(diags) != 1 || diags[0]["rule"] != "stable-name" || diags[0]["line"] != 13.0 {
		t.Errorf("check --format json: %v\n%s", err, r.stdout)
	}

	r = toolc(t, dir, "build")
	wantStatus(t, r, exitFail, "build after a breaking change")
	wantMatch(t, r.stderr, `\[stable-name\]`, "build's stderr")
	if _, err := os.Stat(filepath.Join(dir, defaultCatalogFile)); err == nil {
		t.Error("build wrote a catalog despite a breaking change")
	}

	// toolc lock accepts it, and says what it accepted.
	r = toolc(t, dir, "lock")
	wantStatus(t, r, exitOK, "lock to accept")
	wantMatch(t, r.stderr, `(?m)^shop/shop.cue:13:97: accepted: maximum of request field "limit" .* \[bound-tightened\]$`, "lock's stderr")
	wantMatch(t, r.stderr, `wrote toolc.lock: 1 service, 2 tools; accepted 1 breaking change and 1 other change\n$`, "lock's stderr")
	wantStatus(t, toolc(t, dir, "check"), exitOK, "check after lock")
	wantStatus(t, toolc(t, dir, "build"), exitOK, "build after lock")

	// A major version bump allows a service to break its tools.
	lockEdit(t, dir, "shop/shop.cue", `version:     "1.2.0"`, `version:     "2.0.0"`, "tools: cancel_order:", "tools: void_order:", `"Order id"}`, `"Order id", pattern: "^o[0-9]+$"}`)
	wantStatus(t, toolc(t, dir, "check"), exitOK, "check after a major version bump")
	r = toolc(t, dir, "diff")
	wantStatus(t, r, exitOK, "diff after a major version bump")
	wantMatch(t, r.stdout, `(?m)^shop/shop.cue:5:1: allowed: tool "cancel_order" was removed from service "shop"; .*; allowed by the major version bump of service "shop" from 1.2.0 to 2.0.0 \[tool-removed\]$`, "diff's output")
	wantMatch(t, r.stderr, `(?m)^toolc diff: against toolc.lock: 0 breaking, 1 allowed by a major version bump, 1 compatible$`, "diff's summary")
}

// TestLockStable checks that the lock is the same bytes whatever the order
// of files, declarations, fields and enum values.
func TestLockStable(t *testing.T) {
	a := writeFiles(t, map[string]string{"shop/shop.cue": shopContract, "notes/notes.cue": notesContract})
	split := strings.Replace(shopContract, `	tools: cancel_order: {
		description: "Cancel an order"
		request: fields: order_id: {type: "string", description: "Order id"}
	}
`, "", 1)
	split = strings.Replace(split, `			customer: {type: "string", description: "Customer id", minLength: 2}
			limit: {type: "integer", description: "Most orders to return", required: false, default: 10, maximum: 100}`,
		`			limit: {maximum: 100, type: "integer", description: "Most orders to return", required: false, default: 10}
			customer: {type: "string", minLength: 2, description: "Customer id"}`, 1)
	b := writeFiles(t, map[string]string{
		"shop/shop.cue": split,
		"shop/0_cancel.cue": `package shop

tools: cancel_order: {
	request: fields: order_id: {description: "Order id", type: "string"}
	description: "Cancel an order"
}
`,
		"notes/notes.cue": notesContract,
	})
	wantStatus(t, toolc(t, a, "lock"), exitOK, "lock a")
	wantStatus(t, toolc(t, b, "lock", "./notes", "./shop"), exitOK, "lock b")
	if la, lb := readLock(t, a), readLock(t, b); !bytes.Equal(la, lb) {
		t.Errorf("the same contracts in other files and orders give other locks:\n%s\n%s", la, lb)
	}
}

// TestLockPatterns checks that locking some packages keeps the lock's
// record of the others, so that a partial lock accepts nothing else.
func TestLockPatterns(t *testing.T) {
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract, "notes/notes.cue": notesContract})
	wantStatus(t, toolc(t, dir, "lock"), exitOK, "lock")
	lockEdit(t, dir, "shop/shop.cue", "minLength: 2", "minLength: 3")
	lockEdit(t, dir, "notes/notes.cue", `text: {type: "string"`, `text: {type: "integer"`)

	r := toolc(t, dir, "lock", "./shop")
	wantStatus(t, r, exitOK, "lock ./shop")
	wantMatch(t, r.stderr, `wrote toolc.lock: 2 services, 3 tools; accepted 1 breaking change and 0 other changes`, "lock's stderr")
	r = toolc(t, dir, "check")
	wantStatus(t, r, exitFail, "check after locking ./shop")
	wantMatch(t, r.stdout, `(?m)^notes/notes.cue:11:27: error: request field "text" of tool "add_note" changed from string to integer`, "check's output")
	if strings.Contains(r.stdout, "shop/") {
		t.Errorf("check reports shop, which the lock accepted:\n%s", r.stdout)
	}
	// Checking only shop says nothing about notes.
	wantStatus(t, toolc(t, dir, "check", "./shop"), exitOK, "check ./shop")
}

// TestDiffAgainst compares with each thing --against takes, in each format.
func TestDiffAgainst(t *testing.T) {
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract, "notes/notes.cue": notesContract, "out/README": "build output\n"})

	r := toolc(t, dir, "diff")
	wantStatus(t, r, exitUsage, "diff without a lock")
	wantMatch(t, r.stderr, `^toolc diff: no toolc.lock here: record the contracts with toolc lock, or compare with --against FILE\|GIT-REF\n$`, "diff's stderr")

	wantStatus(t, toolc(t, dir, "lock"), exitOK, "lock")
	wantStatus(t, toolc(t, dir, "build", "-o", "out/old.catalog.json"), exitOK, "build")
	if err := os.Rename(filepath.Join(dir, lock.FileName), filepath.Join(dir, "out", "old.lock")); err != nil {
		t.Fatal(err)
	}
	r = toolc(t, dir, "diff", "--against", "out/old.lock")
	wantStatus(t, r, exitOK, "diff with no changes")
	if r.stdout != "" || !strings.Contains(r.stderr, "toolc diff: against out/old.lock: no changes") {
		t.Errorf("diff with no changes: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	// notes is gone; shop renamed a field and added an optional one.
	if err := os.RemoveAll(filepath.Join(dir, "notes")); err != nil {
		t.Fatal(err)
	}
	lockEdit(t, dir, "shop/shop.cue", "customer: {", "customer_id: {", "limit: {", `page: {type: "integer", description: "Page", required: false}
			limit: {`)
	wantText := `out/old.lock: breaking: tool "add_note" was removed with its service "notes", which was in notes; models, prompts and clients that call it break [tool-removed]
shop/shop.cue:12:4: breaking: request field "customer" of tool "find_orders" was renamed "customer_id"; calls that send "customer" are rejected, and prompts that name it mislead the model [field-renamed]
shop/shop.cue:13:4: compatible: optional request field "page" was added to tool "find_orders" [field-added-optional]
`
	for _, against := range []string{"out/old.lock", "out/old.catalog.json"} {
		r = toolc(t, dir, "diff", "--against", against)
		wantStatus(t, r, exitFail, "diff --against "+against)
		want := strings.ReplaceAll(wantText, "out/old.lock", against)
		if got := withoutTokens(r.stdout); got != want {
			t.Errorf("diff --against %s:\n%s\nwant:\n%s", against, got, want)
		}
		wantMatch(t, r.stderr, `(?m): 2 breaking, 0 allowed by a major version bump, 1 compatible$`, "diff's summary")
	}

	r = toolc(t, dir, "diff", "--against", "out/old.lock", "--format", "json")
	wantStatus(t, r, exitFail, "diff --format json")
	var changes []struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Rule     string `json:"rule"`
		Breaking bool   `json:"breaking"`
		Allowed  bool   `json:"allowed"`
		Service  string `json:"service"`
		Tool     string `json:"tool"`
		Field    string `json:"field"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &changes); err != nil {
		t.Fatalf("diff --format json: %v\n%s", err, r.stdout)
	}
	changes = slices.DeleteFunc(changes, func(c struct {
		File     string `json:"file"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Rule     string `json:"rule"`
		Breaking bool   `json:"breaking"`
		Allowed  bool   `json:"allowed"`
		Service  string `json:"service"`
		Tool     string `json:"tool"`
		Field    string `json:"field"`
		Message  string `json:"message"`
	}) bool {
		return c.Rule == "token-growth" // TestDiffTokens
	})
	if len(changes) != 3 || changes[1].Rule != "field-renamed" || !changes[1].Breaking || changes[1].Field != "customer_id" ||
		changes[1].File != "shop/shop.cue" || changes[1].Line != 12 || changes[1].Column != 4 || changes[2].Breaking || r.stderr != "" {
		t.Errorf("diff --format json:\n%s\nstderr: %s", r.stdout, r.stderr)
	}

	r = toolc(t, dir, "diff", "--against", "out/old.lock", "--format", "github")
	wantStatus(t, r, exitFail, "diff --format github")
	wantMatch(t, r.stdout, `(?m)^::error file=shop/shop.cue,line=12,col=4,title=field-renamed::request field "customer" of tool "find_orders" was renamed "customer_id"; calls`, "diff --format github")
	wantMatch(t, r.stdout, `(?m)^::notice file=shop/shop.cue,line=13,col=4,title=field-added-optional::optional request field "page"`, "diff --format github")

	// Patterns narrow the comparison: notes is out of it.
	r = toolc(t, dir, "diff", "--against", "out/old.lock", "./shop")
	wantStatus(t, r, exitFail, "diff ./shop")
	if strings.Contains(r.stdout, "notes") {
		t.Errorf("diff ./shop reports notes:\n%s", r.stdout)
	}

	r = toolc(t, dir, "diff", "--against", "out/old.lock", "--format", "yaml")
	wantStatus(t, r, exitUsage, "diff --format yaml")

	// Contracts with errors are not compared.
	lockEdit(t, dir, "shop/shop.cue", `description: "Page"`, `description: ""`)
	r = toolc(t, dir, "diff", "--against", "out/old.lock")
	wantStatus(t, r, exitFail, "diff of contracts with errors")
	wantMatch(t, r.stderr, `\[description\]\n.*\n.*\ntoolc diff: the contracts have 1 error; fix them, then compare\n$`, "diff's stderr")
}

// TestBadLock checks that a lock toolc cannot read stops every command
// with status 2, a message that says what is wrong, and nothing written.
func TestBadLock(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"corrupt", "{\n  \"format\": \"toolc.lock/v1\",\n<<<<<<< HEAD\n", `toolc.lock: lock: corrupt file at line 3, column 1: .*\(a merge conflict\?\); regenerate it from the contracts with toolc lock`},
		{"newer", `{"format": "toolc.lock/v9", "fingerprint": "", "services": []}`, `toolc.lock: lock: format "toolc.lock/v9" is newer than "toolc.lock/v1", the version this toolc reads: upgrade toolc`},
		{"empty", "", `toolc.lock: lock: empty file: not a toolc lock file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract, lock.FileName: tt.data})
			for _, cmd := range [][]string{{"check"}, {"build"}, {"lock"}, {"diff"}} {
				r := toolc(t, dir, cmd...)
				wantStatus(t, r, exitUsage, strings.Join(cmd, " "))
				wantMatch(t, r.stderr, "^toolc "+cmd[0]+": "+tt.want+"\n$", cmd[0]+"'s stderr")
			}
			if got := string(readLock(t, dir)); got != tt.data {
				t.Errorf("the lock was overwritten:\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(dir, defaultCatalogFile)); err == nil {
				t.Error("build wrote a catalog")
			}
		})
	}

	// A hand edit is caught by the fingerprint.
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})
	wantStatus(t, toolc(t, dir, "lock"), exitOK, "lock")
	lockEdit(t, dir, lock.FileName, `"maximum": 100`, `"maximum": 50`)
	r := toolc(t, dir, "check")
	wantStatus(t, r, exitUsage, "check with an edited lock")
	wantMatch(t, r.stderr, `^toolc check: toolc.lock: lock: the file does not match its fingerprint: it was edited by hand or damaged`, "check's stderr")
	r = toolc(t, dir, "diff", "--against", "missing.lock")
	wantStatus(t, r, exitUsage, "diff --against a missing file outside git")
	wantMatch(t, r.stderr, `^toolc diff: --against missing.lock: no such file, and .* is not in a git repository, so it is not a revision either\n$`, "diff's stderr")
}

// TestDiffGit compares with the contracts at a git revision of a
// throwaway repository, from its top and from a subdirectory.
func TestDiffGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := writeFiles(t, map[string]string{
		"api/shop/shop.cue":   shopContract,
		"api/notes/notes.cue": notesContract,
		"README":              "a repository with contracts under api/\n",
	})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=toolc test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "nothing yet")
	git("tag", "empty")
	git("add", ".")
	git("commit", "-q", "-m", "contracts")
	git("tag", "v1")

	// Untouched: no changes, from the top and from api/.
	api := filepath.Join(repo, "api")
	for _, dir := range []string{repo, api} {
		r := toolc(t, dir, "diff", "--against", "main")
		wantStatus(t, r, exitOK, "diff --against main in "+dir)
		wantMatch(t, r.stderr, `^toolc diff: against main \([0-9a-f]{12}\): no changes\n$`, "diff's stderr")
	}

	lockEdit(t, api, "shop/shop.cue", `tools: cancel_order: {
		description: "Cancel an order"`, `tools: cancel_order: {
		description: "Cancel an order"
		mcp: name:   "cancel"`)
	if err := os.Remove(filepath.Join(api, "notes", "notes.cue")); err != nil {
		t.Fatal(err)
	}
	r := toolc(t, api, "diff", "--against", "v1")
	wantStatus(t, r, exitFail, "diff --against v1")
	want := `breaking: tool "add_note" was removed with its service "notes", which was in notes; models, prompts and clients that call it break [tool-removed]
shop/shop.cue:18:8: breaking: MCP name of tool "cancel_order" changed from "shop_cancel_order" to "cancel"; MCP clients that call "shop_cancel_order" break [mcp-name-changed]
`
	if got := withoutTokens(r.stdout); got != want {
		t.Errorf("diff --against v1:\n%s\nwant:\n%s", got, want)
	}
	for _, pattern := range []string{"./shop", filepath.Join(api, "shop")} {
		r = toolc(t, api, "diff", "--against", "HEAD", pattern)
		wantStatus(t, r, exitFail, "diff --against HEAD "+pattern)
		if strings.Contains(r.stdout, "notes") || !strings.Contains(r.stdout, "[mcp-name-changed]") {
			t.Errorf("diff %s:\n%s", pattern, r.stdout)
		}
	}

	// A revision without the contracts: every tool is new.
	r = toolc(t, api, "diff", "--against", "empty")
	wantStatus(t, r, exitOK, "diff --against a revision without contracts")
	wantMatch(t, r.stderr, `toolc diff: note: empty has no api/: every tool is new`, "diff's stderr")
	wantMatch(t, r.stdout, `(?m)^shop/shop.cue:9:9: compatible: tool "find_orders" was added to service "shop" \[tool-added\]$`, "diff's output")

	for _, ref := range []string{"no-such-branch", "v1~5", "-v"} {
		r = toolc(t, api, "diff", "--against", ref)
		wantStatus(t, r, exitUsage, "diff --against "+ref)
		wantMatch(t, r.stderr, fmt.Sprintf(`^toolc diff: --against %s: no such file, and (no such git revision|not a git revision)\n$`, regexp.QuoteMeta(ref)), "diff's stderr")
	}
}

// TestREADMEChanges keeps the README's table of kinds of change equal to
// lock.Kinds.
func TestREADMEChanges(t *testing.T) {
	readme := docs(t).All()
	_, rest, ok := strings.Cut(readme, "<!-- changes:begin -->\n")
	table, _, ok2 := strings.Cut(rest, "<!-- changes:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no changes:begin/changes:end block")
	}
	var b strings.Builder
	b.WriteString("| ID | kind | change |\n|---|---|---|\n")
	for _, k := range lock.Kinds() {
		kind := "compatible"
		if k.Breaking {
			kind = "breaking"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.ID, kind, k.Doc)
	}
	if table != b.String() {
		t.Errorf("README.md's table of changes is stale; want:\n%s", b.String())
	}
}

// withoutTokens drops diff's token-growth lines, which TestDiffTokens
// checks: the tests of the lock's changes compare the rest as it stands.
func withoutTokens(out string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		if !strings.HasSuffix(line, "[token-growth]\n") {
			b.WriteString(line)
		}
	}
	return b.String()
}
