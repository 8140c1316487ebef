package rpc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolc/toolc/internal/testsync"
)

// TestPluginDiesWithItsHost SIGKILLs a host, which has no chance to clean
// up, and checks that the kernel takes its plugin down too.
func TestPluginDiesWithItsHost(t *testing.T) {
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), hostHelperEnv+"="+filepath.Join(bin, "toolbox"))
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	var pid int
	if _, err := fmt.Sscanf(line, "pid %d", &pid); err != nil {
		host.Process.Kill()
		t.Fatalf("host helper said %q", line)
	}
	defer syscall.Kill(pid, syscall.SIGKILL) // only if the test fails
	if !alive(pid) {
		t.Fatalf("plugin %d is not running while its host is", pid)
	}

	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	testsync.WaitFor(t, 5*time.Second, fmt.Sprintf("plugin %d to die with its host", pid), func() bool { return !alive(pid) })
}

// alive reports whether pid is a running process; a zombie, dead but not
// yet reaped by whoever adopted it, is not.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}
