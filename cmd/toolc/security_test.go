package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runOpts are what toolcRun adds to toolc: an environment, standard input,
// and a bound on the run, so that a regression that blocks or reads
// forever fails the test instead of hanging it or eating the machine.
type runOpts struct {
	dir     string
	env     []string // added to the test's own
	stdin   string
	stdinR  *os.File // standard input as a file, when set
	timeout time.Duration
}

func toolcRun(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolcBin, args...)
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), o.env...)
	if o.stdinR != nil {
		cmd.Stdin = o.stdinR
	} else {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("toolc %s did not finish within %s\nstderr:\n%s", strings.Join(args, " "), o.timeout, stderr.String())
	}
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r := result{status, stdout.String(), stderr.String()}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") {
			t.Fatalf("toolc %s showed a Go stack trace:\n%s", strings.Join(args, " "), s)
		}
	}
	return r
}

// gitRun runs git in dir with a configuration of the test's own, and
// returns its output.
func gitRun(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=toolc test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestDiffCraftedTree is the attack of issue 11: a revision whose tree
// holds a link l1 -> . beside a directory l1, which holds a link l2 -> ..
// beside a directory l2. git archive writes l1/l2/sibling/canary, which a
// naive extraction into $TMPDIR/toolc-X writes to $TMPDIR/sibling/canary.
// toolc diff must refuse the revision, say why, and write nothing outside
// its temporary directory.
func TestDiffCraftedTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tmp := t.TempDir()
	canary := filepath.Join(tmp, "sibling", "canary")
	if err := os.MkdirAll(filepath.Dir(canary), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(canary, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})
	gitRun(t, repo, "", "init", "-q")
	blob := func(s string) string { return gitRun(t, repo, s, "hash-object", "-w", "--stdin") }
	mktree := func(lines ...string) string { return gitRun(t, repo, strings.Join(lines, "\n")+"\n", "mktree") }
	l2 := mktree("040000 tree " + mktree("100644 blob "+blob("pwned\n")+"\tcanary") + "\tsibling")
	l1 := mktree("120000 blob "+blob("..")+"\tl2", "040000 tree "+l2+"\tl2")
	shop := mktree("100644 blob " + blob(shopContract) + "\tshop.cue")
	top := mktree("120000 blob "+blob(".")+"\tl1", "040000 tree "+l1+"\tl1", "040000 tree "+shop+"\tshop")
	commit := gitRun(t, repo, "", "commit-tree", "-m", "crafted", top)

	r := toolcRun(t, runOpts{dir: repo, env: []string{"TMPDIR=" + tmp}}, "diff", "--against", commit)
	wantStatus(t, r, exitUsage, "diff --against a crafted tree")
	wantMatch(t, r.stderr, `^toolc diff: --against [0-9a-f]+: the archive's entry "l1/l2": its path leads outside the tree through a symbolic link; the revision's tree is crafted to write elsewhere, and nothing was written outside\n$`, "diff's stderr")
	if data, err := os.ReadFile(canary); err != nil || string(data) != "original\n" {
		t.Errorf("the canary beside the temporary directory is now %q (%v)", data, err)
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 {
		t.Errorf("the temporary directory was left behind, or more was written: %v", entries)
	}
}

// TestDiffLinksOutside: a revision whose contract tree links to a file
// outside it (here, a contract beside the repository) compares as if the
// link were not there, and says so.
func TestDiffLinksOutside(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	parent := writeFiles(t, map[string]string{"outside/notes.cue": notesContract, "repo/shop/shop.cue": shopContract})
	repo := filepath.Join(parent, "repo")
	os.MkdirAll(filepath.Join(repo, "notes"), 0o755)
	if err := os.Symlink("../../outside/notes.cue", filepath.Join(repo, "notes", "notes.cue")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "", "init", "-q")
	gitRun(t, repo, "", "add", ".")
	gitRun(t, repo, "", "commit", "-q", "-m", "a link outside")
	r := toolcRun(t, runOpts{dir: repo}, "diff", "--against", "HEAD")
	wantStatus(t, r, exitOK, "diff --against a tree with a link outside")
	wantMatch(t, r.stderr, `(?m)^toolc diff: note: at HEAD, notes/notes.cue: a symbolic link to "../../outside/notes.cue", which leads outside the tree, not written$`, "diff's stderr")
	wantMatch(t, r.stdout, `(?m)^notes/notes.cue:\d+:\d+: compatible: tool "add_note" was added`, "diff's output")
}

// TestDiffAgainstNotAFile: --against names a path that is not a file diff
// can read, and not a git revision either; the message says what the path
// is, rather than "no such file".
func TestDiffAgainstNotAFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract, "old/README": "a directory\n"})
	for link, target := range map[string]string{"loop.lock": "loop.lock", "ab.lock": "ba.lock", "ba.lock": "ab.lock", "gone.lock": "nowhere.lock"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ against, says string }{
		{"old", `a directory, not a lock file or a catalog file`},
		{"loop.lock", `a symbolic link to "loop.lock" that loops back on itself`},
		{"ab.lock", `a symbolic link to "ba.lock" that loops back on itself`},
		{"gone.lock", `a symbolic link to "nowhere.lock", which does not exist`},
		{"missing.lock", `no such file`},
	} {
		r := toolcRun(t, runOpts{dir: dir, env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}}, "diff", "--against", tt.against)
		wantStatus(t, r, exitUsage, "diff --against "+tt.against)
		wantMatch(t, r.stderr, `^toolc diff: --against `+tt.against+`: `+regexp.QuoteMeta(tt.says)+`, and .* is not in a git repository, so it is not a revision either\n$`, "diff's stderr")
	}
}

// TestServeExposed: serve and dev refuse, without a token, an --http
// address that other machines reach, and say why, unless --insecure says
// so. The check comes before anything is compiled, so none of these runs
// listens: the patterns name nothing.
func TestServeExposed(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range []string{"serve", "dev"} {
		for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "0.0.0.0:8931", "10.1.2.3:0"} {
			r := toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_TOKEN="}}, cmd, "--http", addr, "./nothing")
			wantStatus(t, r, exitUsage, cmd+" --http "+addr)
			wantMatch(t, r.stderr, `^toolc `+cmd+`: --http `+regexp.QuoteMeta(addr)+` can be reached from other machines, and without a token anyone who reaches it could call every tool; give --token \(or \$TOOLC_TOKEN\), serve on a loopback address such as 127.0.0.1:8931, or pass --insecure to serve it open anyway\n$`, cmd+"'s stderr")
		}
		// Past the check, each fails on the missing pattern instead.
		for _, tt := range []struct {
			args []string
			env  string
			warn bool
		}{
			{[]string{"--http", "0.0.0.0:0", "--insecure"}, "TOOLC_TOKEN=", true},
			{[]string{"--http", "0.0.0.0:0", "--token", "s3cret"}, "TOOLC_TOKEN=", false},
			{[]string{"--http", "0.0.0.0:0"}, "TOOLC_TOKEN=s3cret", false},
			{[]string{"--http", "127.0.0.1:0"}, "TOOLC_TOKEN=", false},
			{[]string{"--http", "localhost:0"}, "TOOLC_TOKEN=", false},
			{[]string{"--stdio", "--http", "0.0.0.0:0"}, "TOOLC_TOKEN=", false},
		} {
			r := toolcRun(t, runOpts{dir: dir, env: []string{tt.env}}, append(append([]string{cmd}, tt.args...), "./nothing")...)
			what := cmd + " " + strings.Join(tt.args, " ") + " " + tt.env
			wantStatus(t, r, exitUsage, what)
			if strings.Contains(r.stderr, "without a token anyone") {
				t.Errorf("%s: refused:\n%s", what, r.stderr)
			}
			if got := strings.Contains(r.stderr, "warning: --http 0.0.0.0:0 can be reached from other machines, and with --insecure and no --token anyone who reaches it can call every tool"); got != tt.warn {
				t.Errorf("%s: warning %v, want %v:\n%s", what, got, tt.warn, r.stderr)
			}
			if !strings.Contains(r.stderr, "nothing") {
				t.Errorf("%s: did not go on to the pattern:\n%s", what, r.stderr)
			}
		}
	}
}
