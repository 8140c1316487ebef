package procsec

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The test binary plays two parts besides the test: a parent that holds a
// secret in its environment, seals itself (or not) and starts a child of
// its own user, and that child, which tries to read the parent's
// /proc/PID/environ, as a plugin could.
const (
	roleVar   = "PROCSEC_TEST_ROLE"
	secretVar = "PROCSEC_TEST_SECRET"
	secret    = "s3cret-token-value"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleVar) {
	case "parent", "parent-unsealed":
		os.Exit(parent(os.Getenv(roleVar) == "parent"))
	case "child":
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// parent exits 0 if its child could read its secret, 3 if not, and 1 on
// any other failure.
func parent(seal bool) int {
	if seal {
		if err := Seal(); err != nil {
			return 1
		}
		if ok, err := sealed(); err != nil || !ok {
			return 1
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	// The child gets no secret: it must find it in the parent.
	cmd := exec.Command(exe)
	cmd.Env = []string{roleVar + "=child", "PROCSEC_TEST_PPID=" + strconv.Itoa(os.Getpid())}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 1
	}
	if strings.Contains(string(out), secret) {
		return 0
	}
	return 3
}

func child() int {
	f, err := os.Open("/proc/" + os.Getenv("PROCSEC_TEST_PPID") + "/environ")
	if err != nil {
		os.Stdout.WriteString("denied: " + err.Error())
		return 0
	}
	defer f.Close()
	data, _ := io.ReadAll(f) // a sealed parent's environ opens and reads empty
	os.Stdout.Write(data)
	return 0
}

// TestSealHidesEnvironFromChildren: an unsealed parent's child of the same
// user reads the parent's secret from /proc; a sealed one's cannot. Run as
// root, where /proc hides nothing, the parent runs as nobody, as toolc
// does in production.
func TestSealHidesEnvironFromChildren(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		// nobody cannot reach go test's own build directory: a copy in a
		// directory it can enter.
		dir, err := os.MkdirTemp("", "procsec")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		exe = filepath.Join(dir, "procsec.test")
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	run := func(role string) int {
		cmd := exec.Command(exe)
		cmd.Env = []string{roleVar + "=" + role, secretVar + "=" + secret}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v %s", role, err, out)
		}
		return 0
	}
	if got := run("parent-unsealed"); got != 0 {
		t.Fatalf("an unsealed parent's child did not read its secret (status %d): the test cannot tell sealed from unsealed here", got)
	}
	if got := run("parent"); got != 3 {
		t.Errorf("a sealed parent's child: status %d, want 3 (the secret stayed hidden)", got)
	}
}
