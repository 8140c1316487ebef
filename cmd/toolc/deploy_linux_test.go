package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readmeBlock is a fenced code block of the README: its info string
// ("sh", "ini", ...) and its text.
type readmeBlock struct {
	lang, text string
}

// readmeSection returns the blocks of the documentation's section
// titled title (README.md or a page of docs/), up to the next section of
// its level.
func readmeSection(t *testing.T, title string) []readmeBlock {
	t.Helper()
	bs, err := docs(t).SectionBlocks(title)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	for _, b := range bs {
		blocks = append(blocks, readmeBlock{b.Lang, b.Text})
	}
	return blocks
}

// shellScript turns an sh block into lines of a script that say each
// command before it runs, as runSteps does: a user pasting the block.
func shellScript(block string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		b.WriteString("echo '$ '" + shellWord(line) + "\n" + line + "\n")
	}
	return b.String()
}

// copyCheckout copies the files of the checkout that git knows, or
// would add, into a new directory: the README's commands write dist/,
// which must not land in the real one.
func copyCheckout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the test copies the checkout)", err)
	}
	dst := filepath.Join(t.TempDir(), "toolc")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink
		}
		target := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
		if err == nil {
			_, err = io.Copy(f, in)
			f.Close()
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// namespaced is the command that runs script with sh in namespaces of
// its own: a network namespace, so that the README's port 8931 is free
// whatever else runs, and, with user, a user, mount and PID namespace in
// which the script is root and may mount over /opt, and whose processes
// all end with it (a server a failed step left running would hold the
// test's pipe). It skips the test where the system allows no namespaces,
// unless $CI says it must run. It is killed after ten minutes.
func namespaced(t *testing.T, user bool, script string) *exec.Cmd {
	t.Helper()
	args := []string{"--net"}
	if user {
		args = append(args, "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc")
	}
	if err := exec.Command("unshare", append(args, "true")...).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("unshare %s: %v", strings.Join(args, " "), err)
		}
		t.Skipf("unshare %s: %v: the README's commands need a network namespace of their own for port 8931", strings.Join(args, " "), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "unshare", append(args, "sh", "-c", "set -e\nip link set lo up\n"+script)...)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// TestREADMEDeploying runs the commands of the README's Deploying
// section as printed, in a copy of the checkout with the toolc under test
// on PATH: the bundle, checked and served; the static toolc; the systemd
// unit, verified, and its ExecStart run with /opt/weather in place; and,
// with TOOLC_CONTAINER=1, the container recipe with podman.
func TestREADMEDeploying(t *testing.T) {
	if testing.Short() {
		t.Skip("builds toolc and a bundle")
	}
	var sh []string
	var dockerfile, unit string
	for _, b := range readmeSection(t, "Deploying: `toolc bundle` and `toolc serve --bundle`") {
		switch b.lang {
		case "sh":
			sh = append(sh, b.text)
		case "dockerfile":
			dockerfile = b.text
		case "ini":
			unit = b.text
		}
	}
	if len(sh) != 3 || dockerfile == "" || unit == "" {
		t.Fatalf("the Deploying section has %d sh blocks (want 3: serving a bundle, building toolc, the container), a Dockerfile %t, a unit %t", len(sh), dockerfile != "", unit != "")
	}
	serving, building, container := sh[0], sh[1], sh[2]
	if !strings.Contains(container, "podman run") {
		t.Fatalf("the third sh block of Deploying is not the container's:\n%s", container)
	}
	execStart := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(unit)
	if execStart == nil {
		t.Fatalf("the unit has no ExecStart:\n%s", unit)
	}

	dir := copyCheckout(t)
	tmp := t.TempDir()
	unitFile := filepath.Join(tmp, "weather.service")
	creds := filepath.Join(tmp, "credentials")
	for name, data := range map[string]string{unitFile: unit, filepath.Join(creds, "state.key"): strings.Repeat("k", 44) + "\n"} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	verify := "echo 'systemd-analyze is not installed: the unit is not verified'\n"
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		verify = fmt.Sprintf("out=$(systemd-analyze verify %s 2>&1) || true\n[ -z \"$out\" ] || { echo \"systemd-analyze verify: $out\"; exit 1; }\n", unitFile)
	}
	// The unit's service, as systemd would start it: its ExecStart as
	// printed, with the credential and the token file's variable.
	script := shellScript(serving) + shellScript(building) +
		"mount -t tmpfs tmpfs /opt\nmkdir /opt/weather\ncp dist/toolc /opt/weather/toolc\ncp -R dist/weather /opt/weather/bundle\n" +
		verify +
		"export CREDENTIALS_DIRECTORY=" + creds + " TOOLC_TOKEN=unit-token\n" +
		shellScript(execStart[1]+" &") +
		"toolc health --wait 10s\n" +
		`curl -sf -H "Authorization: Bearer unit-token" -X POST http://127.0.0.1:8931/v1/call -d '{"name": "query_weather", "arguments": {"city": "Bergen"}}'` + "\n" +
		"kill -TERM $!\nwait $! && echo unit stopped cleanly\n"
	cmd := namespaced(t, true, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Deploying commands: %v\n%s", err, out)
	}
	for _, want := range []string{
		"toolc bundle: wrote dist/weather for ",
		"handlers/weather-service: OK",
		`"status":"ok","tools":1`,
		`"structuredContent":{"summary":"Oslo`,
		`"structuredContent":{"summary":"Bergen`,
		"unit stopped cleanly",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the Deploying commands did not print %q:\n%s", want, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "dist", "toolc")); err != nil || !isStatic(t, filepath.Join(dir, "dist", "toolc")) {
		t.Errorf("dist/toolc: %v %v, want a static binary", fi, err)
	}

	if os.Getenv("TOOLC_CONTAINER") == "" {
		t.Log("the container recipe runs with TOOLC_CONTAINER=1 and podman")
		return
	}
	t.Run("container", func(t *testing.T) {
		testContainer(t, dir, dockerfile, container)
	})
}

// isStatic reports whether the ELF file at path asks for no dynamic
// loader: it runs in an image that has none.
func isStatic(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return !strings.Contains(string(data[:min(len(data), 1<<16)]), "/lib64/ld-linux") && !strings.Contains(string(data[:min(len(data), 1<<16)]), "/lib/ld-")
}

// testContainer runs the README's container block with podman, as root
// (podman's image store and networks are root's) in a network namespace
// of its own, after writing dist/Dockerfile as printed. The limits that
// podman sets by default (nofile and nproc of a million) fail where the
// process may not raise its own (no CAP_SYS_RESOURCE, as in this
// project's CI sandbox): unless $CONTAINERS_CONF says otherwise, the test
// gives podman a configuration with lower limits, and runc where it is
// installed (crun refuses the sandbox's hybrid cgroups).
func testContainer(t *testing.T, dir, dockerfile, block string) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("TOOLC_CONTAINER is set, and podman is not installed (apt-get install podman)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("TOOLC_CONTAINER is set: the container test runs podman as root")
	}
	if err := os.WriteFile(filepath.Join(dir, "dist", "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(toolcBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if os.Getenv("CONTAINERS_CONF") == "" {
		var nofile, nproc unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
		unix.Getrlimit(unix.RLIMIT_NPROC, &nproc)
		// Lowering a limit is always allowed; 4096 threads are plenty
		// for toolc and its plugin (a higher nproc failed here, below
		// toolc's own).
		n := min(nproc.Cur, 4096)
		conf := fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n", nofile.Cur, nofile.Cur, n, n)
		if _, err := exec.LookPath("runc"); err == nil {
			conf += "[engine]\nruntime = \"runc\"\n"
		}
		path := filepath.Join(t.TempDir(), "containers.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "CONTAINERS_CONF="+path)
	}
	// The container's name is the README's: one left by a test that
	// was killed goes first. The image goes at the end, so that runs do
	// not pile up images of 60 MB.
	exec.Command("podman", "rm", "-f", "weather").Run()
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", "toolc-weather").Run() })
	cmd := namespaced(t, false, shellScript(block))
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	exec.Command("podman", "rm", "-f", "weather").Run()
	if err != nil {
		t.Fatalf("the container commands: %v\n%s", err, out)
	}
	// toolc health sends no token: the answer says ok, and no more.
	for _, want := range []string{`{"status":"ok"}`, `"structuredContent":{"summary":"Oslo`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the container commands did not print %q:\n%s", want, out)
		}
	}
	inspect, err := exec.Command("podman", "image", "inspect", "--format", "{{.Config.User}} {{.Config.Healthcheck.Test}}", "toolc-weather").CombinedOutput()
	if err != nil || !strings.Contains(string(inspect), "65532:65532 [CMD /toolc health]") {
		t.Errorf("the image's user and health check: %v %s", err, inspect)
	}
}
