//go:build unix

package rpc

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// haveRunner: plugins run under procRunner here.
const haveRunner = true

// procRunner runs a plugin process for go-plugin, in place of go-plugin's
// own runner (which is internal to it), to give the host what that one
// does not:
//
//   - the plugin leads a process group of its own, and the whole group is
//     ended when the plugin exits or is stopped, so that a handler's child
//     processes do not outlive it;
//   - a watchdog process in that group ends it when the host dies, even by
//     SIGKILL, which no cleanup in the host survives;
//   - what the plugin writes to file descriptor 1 after the handshake goes
//     to the log, where go-plugin would read and drop it;
//   - the end of its standard error and its exit status are kept, so that a
//     plugin that dies during its start is reported with its last words;
//   - its standard input is /dev/null, not the host's, which under MCP
//     stdio is the session.
type procRunner struct {
	cmd    *exec.Cmd
	pid    int
	stdout *os.File // the read ends of the plugin's fd 1 and fd 2
	stderr *os.File
	after  io.Writer // receives fd 1's output after the handshake
	tail   *tail

	// exited is closed once the process has exited and its group has been
	// ended; reaped once it has been waited for, and status says how it
	// exited.
	exited     chan struct{}
	reaped     chan struct{}
	status     string
	stderrDone chan struct{} // closed at the end of fd 2

	mu       sync.Mutex
	ended    bool // the group was ended: its id may be reused now
	watchdog *exec.Cmd
	watchW   *os.File // the watchdog's stdin: it acts when this closes
}

// newRunner returns go-plugin's RunnerFunc for the plugin that base
// describes: its executable, arguments and environment. It keeps the
// runner it makes in *made, for the start's error messages.
func newRunner(base *exec.Cmd, after io.Writer, made **procRunner) func(hclog.Logger, *exec.Cmd, string) (runner.Runner, error) {
	return func(_ hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
		cmd := &exec.Cmd{Path: base.Path, Args: base.Args}
		// spec carries go-plugin's variables (the handshake cookie, the
		// protocol versions, the socket directory, the mTLS certificate);
		// base's are what the plugin gets of the host's and the
		// service's, and spec's go last as go-plugin would have put them.
		cmd.Env = append(base.Env[:len(base.Env):len(base.Env)], spec.Env...)
		setProcAttr(cmd)
		stdoutR, stdoutW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		stderrR, stderrW, err := os.Pipe()
		if err != nil {
			stdoutR.Close()
			stdoutW.Close()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = stdoutW, stderrW
		r := &procRunner{
			cmd: cmd, stdout: stdoutR, stderr: stderrR, after: after, tail: &tail{},
			exited: make(chan struct{}), reaped: make(chan struct{}), stderrDone: make(chan struct{}),
		}
		*made = r
		return r, nil
	}
}

func (r *procRunner) Start(context.Context) error {
	err := r.cmd.Start()
	// The write ends are the child's now (or nobody's, on failure).
	r.cmd.Stdout.(*os.File).Close()
	r.cmd.Stderr.(*os.File).Close()
	if err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	r.startWatchdog()
	if canWaitWithoutReaping {
		go r.watch()
	}
	return nil
}

// watchdogScript waits for its standard input to close, which happens
// when the host exits by any means, and then kills its process group: the
// plugin's. It ignores the signals that a terminal or a handler's careless
// `kill 0` would send the group.
const watchdogScript = `trap "" HUP INT TERM QUIT; read _; kill -KILL 0`

// startWatchdog starts /bin/sh running watchdogScript in the plugin's
// process group. Without /bin/sh there is no watchdog: the group is still
// ended whenever the host outlives the plugin.
func (r *procRunner) startWatchdog() {
	pr, pw, err := os.Pipe()
	if err != nil {
		return
	}
	defer pr.Close()
	w := exec.Command("/bin/sh", "-c", watchdogScript)
	w.Stdin = pr
	w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: r.pid}
	if err := w.Start(); err != nil {
		pw.Close()
		return
	}
	r.mu.Lock()
	r.watchdog, r.watchW = w, pw
	r.mu.Unlock()
}

// watch waits for the plugin to exit, without reaping it, so that its
// process id, which is also its group's, cannot be reused while the group
// is ended.
func (r *procRunner) watch() {
	waitExited(r.pid)
	r.endGroup()
}

// endGroup kills what is left of the plugin's process group, the watchdog
// included, once. Then it gives the output pipes a moment to drain and
// ends them, so that a process that left the group and holds them open
// cannot keep go-plugin from seeing the exit.
func (r *procRunner) endGroup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.ended = true
	syscall.Kill(-r.pid, syscall.SIGKILL)
	if r.watchW != nil {
		r.watchW.Close()
	}
	deadline := time.Now().Add(time.Second)
	r.stdout.SetReadDeadline(deadline)
	r.stderr.SetReadDeadline(deadline)
	close(r.exited)
}

func (r *procRunner) Wait(context.Context) error {
	if canWaitWithoutReaping {
		<-r.exited
	}
	err := r.cmd.Wait()
	if !canWaitWithoutReaping {
		// Here the plugin's id is free once reaped; a new process could
		// take it in the moment between. See docs/handlers.md (child processes).
		r.endGroup()
	}
	r.mu.Lock()
	w := r.watchdog
	r.mu.Unlock()
	if w != nil {
		w.Wait()
	}
	if r.cmd.ProcessState != nil {
		r.status = r.cmd.ProcessState.String()
	}
	close(r.reaped)
	return err
}

// exitStatus says how the plugin exited ("exit status 2", "signal:
// killed"), waiting up to wait for it to be reaped; "" if it has not.
func (r *procRunner) exitStatus(wait time.Duration) string {
	select {
	case <-r.reaped:
		return r.status
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.reaped:
		return r.status
	case <-t.C:
		return ""
	}
}

// lastWords sums up the end of the plugin's standard error, waiting up to
// wait for it to end.
func (r *procRunner) lastWords(wait time.Duration) string {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.stderrDone:
	case <-t.C:
	}
	return lastWords(r.tail.String())
}

// killGroup is Kill for the host's own use.
func (r *procRunner) killGroup() { r.Kill(context.Background()) }

// Kill ends the plugin's process group at once.
func (r *procRunner) Kill(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid == 0 || r.ended {
		return nil
	}
	if err := syscall.Kill(-r.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

func (r *procRunner) Stdout() io.ReadCloser { return &handshakeReader{f: r.stdout, after: r.after} }

func (r *procRunner) Stderr() io.ReadCloser {
	return &tailReader{f: r.stderr, tail: r.tail, done: r.stderrDone}
}

func (r *procRunner) Name() string { return r.cmd.Path }

// Pid is the plugin's process id, which is also its group's.
func (r *procRunner) Pid() int { return r.pid }

func (r *procRunner) ID() string {
	if r.pid == 0 {
		return ""
	}
	return strconv.Itoa(r.pid)
}

func (r *procRunner) Diagnose(context.Context) string { return "" }

func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// handshakeReader hands go-plugin the plugin's fd 1 up to the end of the
// first line, the handshake, and from then on sends everything to after,
// returning nothing more to go-plugin until the end.
type handshakeReader struct {
	f     *os.File
	after io.Writer
	shook bool
}

func (h *handshakeReader) Read(p []byte) (int, error) {
	if !h.shook {
		n, err := h.f.Read(p)
		for i, b := range p[:n] {
			if b == '\n' {
				h.shook = true
				h.after.Write(p[i+1 : n])
				return i + 1, endOf(err)
			}
		}
		return n, endOf(err)
	}
	buf := make([]byte, 4096)
	for {
		n, err := h.f.Read(buf)
		h.after.Write(buf[:n])
		if err != nil {
			return 0, endOf(err)
		}
	}
}

func (h *handshakeReader) Close() error { return h.f.Close() }

// tailReader passes the plugin's fd 2 on to go-plugin, keeping its end.
type tailReader struct {
	f    *os.File
	tail *tail
	done chan struct{}
	once sync.Once
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.f.Read(p)
	t.tail.Write(p[:n])
	if err != nil {
		t.once.Do(func() { close(t.done) })
	}
	return n, endOf(err)
}

func (t *tailReader) Close() error { return t.f.Close() }

// endOf turns the deadline that endGroup sets into the end of the stream.
func endOf(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return io.EOF
	}
	return err
}
