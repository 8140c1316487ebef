package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	stdinR  io.Reader // standard input, when set, instead of stdin
	timeout time.Duration
	// memKiB bounds the process's address space (ulimit -v), so that a
	// regression that reads without bound fails instead of eating the
	// machine.
	memKiB int
}

func toolcRun(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolcBin, args...)
	if o.memKiB > 0 {
		cmd = exec.CommandContext(ctx, "sh", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$@"`, o.memKiB), "sh", toolcBin}, args...)...)
	}
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
// link were not there, and says so. In the working tree, such a link is
// refused, as every contract file outside its module is.
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
	wantStatus(t, r, exitUsage, "diff with a link outside in the working tree")
	wantMatch(t, r.stderr, `(?m)^toolc diff: notes/notes.cue \(a link to ../../outside/notes.cue\) leads outside the CUE module `, "diff's stderr")
	// The working tree holds the contract itself; the revision, the link.
	os.Remove(filepath.Join(repo, "notes", "notes.cue"))
	os.WriteFile(filepath.Join(repo, "notes", "notes.cue"), []byte(notesContract), 0o644)
	r = toolcRun(t, runOpts{dir: repo}, "diff", "--against", "HEAD")
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

// endless is a standard input that never ends, counting what it gave.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// TestUnboundedInputs: every input that toolc reads whole is read only
// from a regular file, within a limit, and fails with exit 2 and a message
// that names the limit or the kind of file. Before, each of these grew
// memory until the machine ran out, or blocked for ever; each run here is
// bounded in time and in address space, so that a regression fails.
func TestUnboundedInputs(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract, "big.json": strings.Repeat(" ", 2<<20) + "{}"})
	fifo := filepath.Join(dir, "fifo.json")
	if err := mkfifo(fifo); err != nil {
		t.Skip(err)
	}
	const notRegular = `is a (character device|FIFO), not a regular file; toolc reads its input files only from regular files`
	const overLimit = `is over the (64MiB|1MiB) limit on input \(set TOOLC_MAX_INPUT to raise it, as in TOOLC_MAX_INPUT=(256MiB|4MiB)\)`
	run := func(env []string, stdin io.Reader, args ...string) result {
		t.Helper()
		// toolc serve's task file is named for its address, in the state
		// directory: another toolc serve of the machine's (a test beside
		// this one) could hold the default one, and add a line to stderr.
		env = append(env, "XDG_STATE_HOME="+t.TempDir())
		return toolcRun(t, runOpts{dir: dir, env: env, stdinR: stdin, timeout: 30 * time.Second, memKiB: 2 << 20}, args...)
	}
	for _, tt := range []struct {
		args []string
		want string // regexp of stderr
	}{
		// Port 0: the default port may be another test's.
		{[]string{"serve", "--http", "127.0.0.1:0", "--catalog", "/dev/zero"}, `^toolc serve: /dev/zero ` + notRegular + `\n$`},
		{[]string{"serve", "--http", "127.0.0.1:0", "--catalog", fifo}, `^toolc serve: .*fifo.json ` + notRegular + `\n$`},
		{[]string{"call", "--catalog", "/dev/zero", "ping", "{}"}, `^toolc call: /dev/zero ` + notRegular},
		{[]string{"call", "--catalog", fifo, "ping", "{}"}, `^toolc call: .*fifo.json ` + notRegular},
		{[]string{"export", "--format", "mcp", "--catalog", "/dev/zero"}, `^toolc export: /dev/zero ` + notRegular},
		{[]string{"export", "--format", "mcp", "--catalog", fifo}, `^toolc export: .*fifo.json ` + notRegular},
		{[]string{"diff", "--against", "/dev/zero"}, `^toolc diff: /dev/zero ` + notRegular},
		{[]string{"diff", "--against", fifo}, `^toolc diff: .*fifo.json ` + notRegular},
		{[]string{"export", "--format", "mcp", "--catalog", "big.json"}, `^toolc export: big.json ` + overLimit},
	} {
		r := run([]string{"TOOLC_MAX_INPUT=1MiB"}, nil, tt.args...)
		wantStatus(t, r, exitUsage, strings.Join(tt.args, " "))
		wantMatch(t, r.stderr, tt.want, strings.Join(tt.args, " "))
	}
	// The limit can be raised.
	r := run([]string{"TOOLC_MAX_INPUT=4MiB"}, nil, "export", "--format", "mcp", "--catalog", "big.json")
	wantMatch(t, r.stderr, `^toolc export: big.json: `, "export with a raised limit")
	r = run([]string{"TOOLC_MAX_INPUT=a lot"}, nil, "export", "--format", "mcp", "--catalog", "big.json")
	wantStatus(t, r, exitUsage, "export with a bad limit")
	wantMatch(t, r.stderr, `\$TOOLC_MAX_INPUT: "a lot" is not a size`, "export with a bad limit")

	// A never-ending standard input for toolc call, at the default limit.
	stdin := &endless{}
	r = run(nil, stdin, "call", "--catalog", "missing.json", "ping")
	wantStatus(t, r, exitUsage, "call with an endless standard input")
	wantMatch(t, r.stderr, `^toolc call: standard input `+overLimit+`\n$`, "call with an endless standard input")
	if stdin.n > 256<<20 {
		t.Errorf("toolc call read %d bytes of standard input", stdin.n)
	}

	// A toolc.lock that links to /dev/zero, or is a FIFO, for every
	// command that reads it.
	for _, lockTo := range []string{"/dev/zero", fifo} {
		os.Remove(filepath.Join(dir, "toolc.lock"))
		if err := os.Symlink(lockTo, filepath.Join(dir, "toolc.lock")); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]string{{"check"}, {"build", "-o", filepath.Join(t.TempDir(), "c.json")}, {"lock"}, {"diff"}} {
			r := run(nil, nil, cmd...)
			wantStatus(t, r, exitUsage, cmd[0]+" with toolc.lock -> "+lockTo)
			wantMatch(t, r.stderr, `^toolc `+cmd[0]+`: toolc.lock `+notRegular+`\n$`, cmd[0]+" with toolc.lock -> "+lockTo)
		}
	}
	os.Remove(filepath.Join(dir, "toolc.lock"))

	// Contract files that are no regular files: the CUE loader would block
	// on the FIFO, and fill memory from /dev/zero.
	for name, target := range map[string]string{"shop/zero.cue": "/dev/zero", "shop/fifo.cue": fifo} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		r := run(nil, nil, "check", "./shop")
		wantStatus(t, r, exitUsage, "check with "+name)
		wantMatch(t, r.stderr, `^toolc check: .*`+filepath.Base(name)+` `+notRegular, "check with "+name)
		os.Remove(filepath.Join(dir, name))
	}
}

// TestSpecialFilesBesideContracts: files that are no contract input but
// that the CUE loader or go/build would read, in a contract's directory or
// one above it: a FIFO or a link to /dev/zero named data.json, notes.txt,
// main.go or .cfg.yaml, and a dangling link. CUE reads any file whose
// extension it knows whole, up front, when it is not a regular file, and
// go/build opens every .go file, so before, toolc check blocked for ever
// on each FIFO and died out of memory on /dev/zero, and failed on the
// dangling link with a bare [syntax] error. They are passed over now, and
// toolc gen go, which must know the Go package, names the FIFO.
func TestSpecialFilesBesideContracts(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := writeFiles(t, map[string]string{"shop/shop.cue": shopContract})
	for _, name := range []string{"shop/data.json", "shop/.cfg.yaml", "shop/main.go", "fifo.json"} {
		if err := mkfifo(filepath.Join(dir, name)); err != nil {
			t.Skip(err)
		}
	}
	for link, target := range map[string]string{"shop/notes.txt": "/dev/zero", "zero.yaml": "/dev/zero", "shop/config.json": "../absent/config.json"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	opts := runOpts{dir: dir, timeout: 20 * time.Second, memKiB: 2 << 20}
	for _, args := range [][]string{{"check", "./shop"}, {"check", "./..."}, {"build", "-o", filepath.Join(t.TempDir(), "c.json"), "./shop"}} {
		r := toolcRun(t, opts, args...)
		wantStatus(t, r, exitOK, strings.Join(args, " "))
	}
	r := toolcRun(t, opts, "gen", "go", "--check", "./shop")
	wantStatus(t, r, exitUsage, "gen go --check")
	wantMatch(t, r.stderr, `shop/main.go is a FIFO, not a regular file`, "gen go --check")
}

// TestContractMemoryBomb: a contract that computes without bound (a list
// of a hundred million numbers) is stopped when toolc's memory passes
// $TOOLC_MAX_MEMORY, with a message and exit 2. CUE has no bound on an
// evaluation, so before, toolc check grew until the address space ran out
// and the Go runtime died with "out of memory" and a stack trace: in CI on
// a pull request, the runner's memory was the contract's to take.
func TestContractMemoryBomb(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bomb/bomb.cue": "package bomb\n\nimport \"list\"\n\nx: [for a in list.Range(0, 100000000, 1) {a}]\n"})
	for _, cmd := range [][]string{{"check", "./bomb"}, {"build", "-o", filepath.Join(t.TempDir(), "c.json"), "./bomb"}} {
		r := toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_MAX_MEMORY=256MiB"}, timeout: time.Minute, memKiB: 3 << 20}, cmd...)
		wantStatus(t, r, exitUsage, cmd[0]+" of a contract that computes without bound")
		wantMatch(t, r.stderr, `^toolc `+cmd[0]+`: stopped: the contracts took more than 256MiB of memory to evaluate \(\d+ MiB in use\); a contract computes something too large`, cmd[0]+" of a contract that computes without bound")
		if strings.Contains(r.stderr, "goroutine ") {
			t.Errorf("%s: a Go stack trace:\n%.2000s", cmd[0], r.stderr)
		}
	}
	r := toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_MAX_MEMORY=lots"}}, "check", "./bomb")
	wantStatus(t, r, exitUsage, "check with a bad TOOLC_MAX_MEMORY")
	wantMatch(t, r.stderr, `^toolc check: \$TOOLC_MAX_MEMORY: "lots" is not a size`, "check with a bad TOOLC_MAX_MEMORY")
}

// TestTokenNotPrinted: $TOOLC_TOKEN never reaches the terminal. It was
// --token's default, which the flag package prints in -h and after every
// usage error. It still guards the server when --token is not given, and
// an explicit --token "" still serves without one.
func TestTokenNotPrinted(t *testing.T) {
	const secret = "tok-9f2c41e7d0"
	dir := t.TempDir()
	for _, cmd := range []string{"serve", "dev"} {
		for _, args := range [][]string{{"-h"}, {"--help"}, {"--bogus"}, {"--max-conns", "many"}, {"--http"}, {"--token"}} {
			r := toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_TOKEN=" + secret}}, append([]string{cmd}, args...)...)
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("toolc %s %s printed $TOOLC_TOKEN:\n%s%s", cmd, strings.Join(args, " "), r.stdout, r.stderr)
			}
		}
		r := toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_TOKEN=" + secret}}, cmd, "--http", "0.0.0.0:0", "./nothing")
		if strings.Contains(r.stderr, "without a token anyone") {
			t.Errorf("toolc %s with $TOOLC_TOKEN set was refused as if it had no token:\n%s", cmd, r.stderr)
		}
		r = toolcRun(t, runOpts{dir: dir, env: []string{"TOOLC_TOKEN=" + secret}}, cmd, "--token", "", "--http", "0.0.0.0:0", "./nothing")
		if !strings.Contains(r.stderr, "without a token anyone") {
			t.Errorf("toolc %s --token \"\" with $TOOLC_TOKEN set took the token from the environment:\n%s", cmd, r.stderr)
		}
	}
	// No flag's default holds it, whoever prints the defaults.
	t.Setenv("TOOLC_TOKEN", secret)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addServeFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.DefValue, secret) {
			t.Errorf("the default of --%s is $TOOLC_TOKEN", f.Name)
		}
	})
}
