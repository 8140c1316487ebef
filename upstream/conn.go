package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolc/toolc/catalog"
	"github.com/toolc/toolc/plugins/rpc"
)

// spec is an upstream block resolved for starting: values read, paths
// made absolute, durations parsed.
type spec struct {
	service string
	command []string
	dir     string
	env     []string
	url     *url.URL
	headers http.Header

	startTimeout, callTimeout, checkInterval time.Duration
	maxMessage                               int
	stderr                                   io.Writer
	httpClient                               *http.Client
}

// maxValueFile bounds a file that a value is read from.
const maxValueFile = 64 << 10

func newSpec(svc *catalog.Service, opts Options) (spec, error) {
	u := svc.Upstream
	sp := spec{service: svc.Name, maxMessage: opts.MaxMessageBytes,
		startTimeout: DefaultStartTimeout, callTimeout: opts.CallTimeout, checkInterval: DefaultCheckInterval}
	for _, d := range []struct {
		text string
		out  *time.Duration
		key  string
	}{{u.StartTimeout, &sp.startTimeout, "startTimeout"}, {u.CallTimeout, &sp.callTimeout, "callTimeout"}, {u.CheckInterval, &sp.checkInterval, "checkInterval"}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil || v <= 0 {
			return sp, fmt.Errorf("%s %q is not a positive duration", d.key, d.text)
		}
		*d.out = v
	}
	dir := filepath.FromSlash(svc.Dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(opts.Base, dir)
	}
	environ := opts.Environ()
	value := func(v catalog.ValueFrom) (string, error) {
		var val string
		switch {
		case v.Env != "":
			if v.Env == "TOOLC_TOKEN" || v.Env == "TOOLC_STATE_KEY" {
				return "", fmt.Errorf("%s would be $%s, toolc's own secret, which no upstream gets", v.Name, v.Env)
			}
			found := false
			for _, kv := range environ {
				if k, x, ok := strings.Cut(kv, "="); ok && k == v.Env {
					val, found = x, true
				}
			}
			if !found {
				return "", fmt.Errorf("%s comes from $%s, which is not set in toolc's environment", v.Name, v.Env)
			}
		case v.File != "":
			path := filepath.FromSlash(v.File)
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			data, err := readBounded(path, maxValueFile)
			if err != nil {
				return "", fmt.Errorf("%s comes from the file %s: %v", v.Name, path, err)
			}
			val = strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
		default:
			return "", fmt.Errorf("%s says not where its value comes from", v.Name)
		}
		return v.Prefix + val, nil
	}
	switch {
	case len(u.Command) > 0:
		sp.command = u.Command
		sp.dir = dir
		if u.Dir != "" {
			sp.dir = filepath.Join(dir, filepath.FromSlash(u.Dir))
		}
		abs, err := filepath.Abs(sp.dir)
		if err != nil {
			return sp, err
		}
		sp.dir = abs
		sp.env = rpc.InheritedEnv(environ)
		for _, v := range u.Env {
			val, err := value(v)
			if err != nil {
				return sp, fmt.Errorf("env %w", err)
			}
			sp.env = append(sp.env, v.Name+"="+val)
		}
		sp.stderr = &lineWriter{out: opts.Stderr, prefix: "[" + svc.Name + "] "}
	case u.URL != "":
		pu, err := url.Parse(u.URL)
		if err != nil {
			return sp, fmt.Errorf("url: %v", err)
		}
		if err := allowedURL(pu, opts.Insecure); err != nil {
			return sp, err
		}
		sp.url = pu
		sp.headers = http.Header{}
		for _, v := range u.Headers {
			val, err := value(v)
			if err != nil {
				return sp, fmt.Errorf("header %w", err)
			}
			sp.headers.Set(v.Name, val)
		}
		sp.httpClient = newHTTPClient(pu, sp.headers, sp.maxMessage)
	default:
		return sp, errors.New("it has neither command nor url")
	}
	return sp, nil
}

// allowedURL refuses a url that is not https, unless it is http to a
// loopback address or insecure allows it.
func allowedURL(u *url.URL, insecure bool) error {
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme != "http":
		return fmt.Errorf("url %s is neither https nor http", u.Redacted())
	case insecure || isLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("url %s is plain http to a host that is not loopback, where anyone on the way reads and changes the calls; use https, or toolc serve --insecure", u.Redacted())
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newHTTPClient is the pooled client of one url: its own transport with
// timeouts, the contract's headers on every request, no redirect to
// another host, and a bound on a JSON response's body.
func newHTTPClient(u *url.URL, headers http.Header, maxBody int) *http.Client {
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // a call's own deadline bounds it; SSE streams stay open
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: &headerTransport{base: base, headers: headers, maxBody: int64(maxBody)},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != u.Host || req.URL.Scheme != u.Scheme {
				return fmt.Errorf("the upstream redirected to %s, another host than %s; toolc follows no redirect off its host", req.URL.Redacted(), u.Host)
			}
			if len(via) >= 5 {
				return errors.New("the upstream redirected more than 5 times")
			}
			return nil
		},
	}
}

type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	maxBody int64
	tap     *schemaTap // see schemaTap; nil but for List
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			req.Header[k] = vs
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	// go-sdk reads a JSON response whole; an event stream it bounds per
	// event itself (MaxEventSize).
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &limitedBody{r: resp.Body, left: t.maxBody, limit: t.maxBody}
	}
	if t.tap != nil {
		resp.Body = &tapBody{ReadCloser: resp.Body, t: t.tap}
	}
	if id := callIDOf(req.Context()); id != "" && req.Method == http.MethodPost && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = newRelatedBody(resp.Body, id)
	}
	return resp, nil
}

type limitedBody struct {
	r     io.ReadCloser
	left  int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the upstream's response is over the limit of %d bytes", b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1] // one byte more tells an exact fit from an excess
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fmt.Errorf("the upstream's response is over the limit of %d bytes", b.limit)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.r.Close() }

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("it is over %d bytes", limit)
	}
	return data, nil
}

// session is one connection to the server: one process of a command, or
// one MCP session with a url.
type session struct {
	cs   *mcp.ClientSession
	proc *process // nil for a url
	// why, once set, is what the calls in flight are told when the
	// session goes: toolc ended it, and why.
	why  atomic.Pointer[string]
	gone chan struct{} // closed when the session has ended
}

// Ended reports whether the session has ended, for the supervisor.
func (s *session) Ended() bool { return s.ended() }

func (s *session) ended() bool {
	select {
	case <-s.gone:
		return true
	default:
		return false
	}
}

func (s *session) exitStatus() string {
	if s.proc == nil {
		return ""
	}
	return s.proc.status()
}

// close ends the session: for a command, it closes its stdin, waits up
// to grace for it to exit, and then kills its process group.
func (s *session) close(grace time.Duration) {
	if s.proc != nil {
		s.proc.stop(grace)
	}
	s.cs.Close()
}

// connect starts a command or opens a session with a url, within the
// start timeout.
func (s *Server) connect(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, s.spec.startTimeout)
	defer cancel()
	var transport mcp.Transport
	var proc *process
	if len(s.spec.command) > 0 {
		var err error
		proc, err = startProcess(s.spec)
		if err != nil {
			return nil, err
		}
		var stdout io.ReadCloser = proc.stdout
		if s.tap != nil {
			stdout = struct {
				io.Reader
				io.Closer
			}{s.tap.reader(proc.stdout), proc.stdout}
		}
		transport = &mcp.IOTransport{Reader: stdout, Writer: proc.stdin, MaxLineLength: s.spec.maxMessage}
	} else {
		transport = &mcp.StreamableClientTransport{Endpoint: s.spec.url.String(), HTTPClient: s.spec.httpClient,
			MaxEventSize: s.spec.maxMessage}
	}
	cs, err := s.client.Connect(ctx, transport, nil)
	if err != nil {
		if proc != nil {
			// Let a server that is exiting by itself finish, so that its
			// status and last words say why.
			proc.stop(500 * time.Millisecond)
			if st := proc.status(); st != "" {
				err = fmt.Errorf("%w (the server %s%s)", err, st, proc.lastWords())
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("the server did not complete the MCP handshake within %s: %w", s.spec.startTimeout, err)
		}
		return nil, err
	}
	sess := &session{cs: cs, proc: proc, gone: make(chan struct{})}
	go func() {
		cs.Wait()
		if proc != nil {
			proc.stop(0)
		}
		close(sess.gone)
	}()
	if proc != nil {
		go func() {
			<-proc.exited
			cs.Close() // the process is gone: so is the session
		}()
	}
	return sess, nil
}

// process is one process of a command, in a process group of its own.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *lineWriter
	exited chan struct{}
	// errDone is closed when its stderr has been read to the end.
	errDone chan struct{}

	mu   sync.Mutex
	st   string
	tail []byte
}

func startProcess(sp spec) (*process, error) {
	cmd := exec.Command(sp.command[0], sp.command[1:]...)
	cmd.Dir = sp.dir
	cmd.Env = sp.env
	setProcAttr(cmd)
	// Pipes of our own rather than cmd's: Wait must not wait for a
	// child's grandchildren to close them, nor close stdout under the
	// session's reader.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", sp.command[0], err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: sp.stderr.(*lineWriter), exited: make(chan struct{}), errDone: make(chan struct{})}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := errR.Read(buf)
			if n > 0 {
				p.keepTail(buf[:n])
				p.stderr.Write(buf[:n])
			}
			if err != nil {
				errR.Close()
				close(p.errDone)
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if err != nil {
			p.st = err.Error()
		} else {
			p.st = "exit status 0"
		}
		p.mu.Unlock()
		killGroup(cmd.Process.Pid) // what it started goes with it
		close(p.exited)
	}()
	return p, nil
}

// keepTail keeps the end of the process's stderr, for the message when
// its start fails.
func (p *process) keepTail(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail = append(p.tail, b...)
	if len(p.tail) > 2048 {
		p.tail = p.tail[len(p.tail)-2048:]
	}
}

func (p *process) lastWords() string {
	select {
	case <-p.errDone:
	case <-time.After(500 * time.Millisecond):
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := strings.TrimSpace(string(bytes.ToValidUTF8(p.tail, []byte("?"))))
	if t == "" {
		return ""
	}
	return "; its last words on stderr: " + t
}

func (p *process) status() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *process) pid() int {
	if p == nil {
		return 0
	}
	select {
	case <-p.exited:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// stop closes the process's stdin, which tells an MCP server over stdio
// to exit, waits up to grace, and then kills its process group.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	if grace > 0 {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.exited:
			return
		case <-t.C:
		}
	}
	killGroup(p.cmd.Process.Pid)
	<-p.exited
	p.stdout.Close()
}

// lineWriter writes whole lines, each with a prefix, and cuts a line
// that runs over maxLine, so that a server flooding its stderr costs
// toolc no more than a line's buffer.
type lineWriter struct {
	mu     sync.Mutex
	out    io.Writer
	prefix string
	buf    []byte
}

const maxLine = 16 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 && len(w.buf) < maxLine {
			return len(p), nil
		}
		if i < 0 || i >= maxLine {
			i = maxLine - 1 // cut here, however much more came in one write
		}
		line := bytes.TrimSuffix(w.buf[:i+1], []byte("\n"))
		io.WriteString(w.out, w.prefix+string(line)+"\n")
		w.buf = w.buf[i+1:]
	}
}
