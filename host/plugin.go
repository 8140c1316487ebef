package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolc/toolc/internal/graceful"
	"github.com/toolc/toolc/plugins"
	"github.com/toolc/toolc/plugins/rpc"
	"github.com/toolc/toolc/runtime"
)

// Plugin supervises the handler plugin of one service. It restarts a
// plugin that died, with exponential backoff; it checks on an interval,
// and after a call that timed out, that the plugin still answers, and
// kills and restarts one that does not (stopped, or stuck); and it lets
// calls in flight finish before Stop ends it.
type Plugin struct {
	cfg    rpc.ClientConfig
	logger *slog.Logger
	tools  []string

	mu     sync.Mutex
	client *proc
	// failures counts the failed starts and crashes since the plugin last
	// answered a call. It is atomic because every call reads it, without mu.
	failures  atomic.Int64
	nextStart time.Time
	// restarting is closed when the restart under way ends; nil when none
	// is. restartErr says why the last one failed.
	restarting chan struct{}
	restartErr error
	closed     bool
	inflight   sync.WaitGroup
	// busy counts the same calls as inflight, for Stop to tell at once
	// whether any is running, which a WaitGroup cannot say.
	busy atomic.Int64
	// probe asks the health check to run now; done ends it.
	probe chan struct{}
	done  chan struct{}
}

// proc is one process of a plugin. why, once set, is what the calls in
// flight on it are told when it goes: the host killed it, and why.
type proc struct {
	*rpc.Client
	why atomic.Pointer[string]
}

var _ runtime.Dispatcher = (*Plugin)(nil)

// Backoff bounds for restarting a crashed plugin.
const (
	minRestartDelay = 100 * time.Millisecond
	maxRestartDelay = 10 * time.Second
)

// Defaults of the health check (rpc.ClientConfig's HealthInterval
// and HealthTimeout).
const (
	DefaultHealthInterval = 10 * time.Second
	DefaultHealthTimeout  = 5 * time.Second
)

// StartPlugin starts a service's handler plugin. The first start must
// succeed: a binary that is missing, is not a plugin or does not answer
// Describe is an error here, not a restart loop.
func StartPlugin(ctx context.Context, cfg rpc.ClientConfig, logger *slog.Logger) (*Plugin, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := rpc.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	tools := slices.Clone(c.Tools())
	slices.Sort(tools)
	p := &Plugin{cfg: cfg, logger: logger, client: &proc{Client: c}, tools: tools,
		probe: make(chan struct{}, 1), done: make(chan struct{})}
	interval, timeout := cfg.HealthInterval, cfg.HealthTimeout
	if interval == 0 {
		interval = DefaultHealthInterval
	}
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	if interval > 0 {
		go p.checkHealth(interval, timeout)
	}
	return p, nil
}

// Tools lists the tools the plugin reported when it first started.
func (p *Plugin) Tools() []string { return p.tools }

// Pid returns the process ID of the running plugin, or 0.
func (p *Plugin) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || p.client.Exited() {
		return 0
	}
	return p.client.Pid()
}

// Call runs a tool on the plugin, restarting the plugin first if it died.
func (p *Plugin) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(plugins.Event)) (*plugins.Result, error) {
	c, err := p.live(ctx)
	if err != nil {
		return nil, err
	}
	defer p.inflight.Done()
	defer p.busy.Add(-1)
	res, err := c.Call(ctx, tool, callID, args, onEvent)
	if err != nil {
		if why := c.why.Load(); why != nil {
			return nil, errors.New(*why)
		}
		if ctx.Err() == nil && c.Exited() {
			return nil, p.exitedDuringCall(c)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// A call that timed out may mean a plugin that no longer
			// answers: check now rather than at the next interval.
			select {
			case p.probe <- struct{}{}:
			default:
			}
		}
	}
	if err == nil && p.failures.Load() > 0 {
		p.failures.Store(0) // a plugin that answers again starts a fresh backoff
	}
	return res, err
}

// exitedDuringCall records that c died during a call, and says so, and
// what happens next.
func (p *Plugin) exitedDuringCall(c *proc) error {
	restarting := p.crashed(c)
	how := ""
	if s := c.ExitStatus(); s != "" {
		how = " (" + s + ")"
	}
	if !restarting {
		return fmt.Errorf("the handler process of service %q exited during the call%s; it is not restarted, as the handler is being stopped", p.cfg.Service, how)
	}
	return fmt.Errorf("the handler process of service %q exited during the call%s; it is being restarted, so the call can be retried", p.cfg.Service, how)
}

// live returns a running client, counted as in flight. When the plugin
// has died, it starts a restart, or joins the one under way, and waits for
// it as long as ctx allows. The restart itself does not depend on ctx: a
// caller that gives up does not abandon it, and callers with short
// deadlines are not held up by a slow start.
func (p *Plugin) live(ctx context.Context) (*proc, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("the handler of service %q has been stopped", p.cfg.Service)
		}
		if p.client != nil && !p.client.Exited() {
			p.inflight.Add(1)
			p.busy.Add(1)
			c := p.client
			p.mu.Unlock()
			return c, nil
		}
		if p.client != nil {
			p.recordCrash()
		}
		wait := p.beginRestart()
		p.mu.Unlock()

		select {
		case <-wait:
		case <-ctx.Done():
			return nil, fmt.Errorf("the handler of service %q is restarting after a crash: %w", p.cfg.Service, ctx.Err())
		}
		p.mu.Lock()
		up := p.client != nil && !p.client.Exited()
		err := p.restartErr
		p.mu.Unlock()
		if !up && err != nil {
			// This caller waited for that restart: it gets its failure.
			// The next call tries again, once the backoff has passed.
			return nil, err
		}
	}
}

// beginRestart starts a restart, unless one is under way, and returns the
// channel that closes when it ends. p.mu is held.
func (p *Plugin) beginRestart() chan struct{} {
	if p.restarting == nil {
		p.restarting = make(chan struct{})
		go p.restart(p.restarting, time.Until(p.nextStart))
	}
	return p.restarting
}

// restart starts the plugin again after delay, bounded by the start
// timeout of the plugin's configuration, and closes done when it is over.
func (p *Plugin) restart(done chan struct{}, delay time.Duration) {
	if delay > 0 {
		time.Sleep(delay)
	}
	c, err := rpc.Start(context.Background(), p.cfg)
	if err == nil {
		if missing := missingTools(p.tools, c.Tools()); len(missing) > 0 {
			c.Kill()
			c, err = nil, fmt.Errorf("the restarted handler of service %q lacks tools %s", p.cfg.Service, strings.Join(missing, ", "))
		}
	} else {
		err = fmt.Errorf("restarting the handler of service %q: %w", p.cfg.Service, err)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	defer close(done)
	p.restarting = nil
	p.restartErr = err
	switch {
	case err != nil:
		p.failures.Add(1)
		p.nextStart = time.Now().Add(p.delay())
	case p.closed:
		// Close ran during the start: nobody will stop this one later.
		c.Kill()
		p.restartErr = fmt.Errorf("the handler of service %q has been stopped", p.cfg.Service)
	default:
		p.logger.Info("handler restarted", "service", p.cfg.Service, "pid", c.Pid())
		p.client = &proc{Client: c}
	}
}

// crashed records that c died, unless it was already replaced, and starts
// its restart. It reports whether a restart is under way: not once the
// plugin is being stopped.
func (p *Plugin) crashed(c *proc) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.client == c {
		p.recordCrash()
	}
	if p.client == nil {
		p.beginRestart()
	}
	return true
}

func (p *Plugin) recordCrash() {
	p.logger.Warn("handler exited", "service", p.cfg.Service)
	p.client.Kill()
	p.client = nil
	p.failures.Add(1)
	p.nextStart = time.Now().Add(p.delay())
}

func (p *Plugin) delay() time.Duration {
	d := minRestartDelay << min(p.failures.Load()-1, 10)
	return min(d, maxRestartDelay)
}

// checkHealth pings the plugin every interval, and when a call timed out,
// and kills a plugin that does not answer within timeout: stopped
// (SIGSTOP), or too stuck to run its gRPC server. A plugin found dead
// between calls is restarted here too, not at the next call.
func (p *Plugin) checkHealth(interval, timeout time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		case <-p.probe:
		}
		p.mu.Lock()
		c := p.client
		p.mu.Unlock()
		if c == nil {
			continue
		}
		if c.Exited() {
			p.crashed(c)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := c.Ping(ctx)
		cancel()
		if err == nil || c.Exited() {
			continue
		}
		why := fmt.Sprintf("the handler process of service %q stopped answering: it did not answer a health check within %s, so it was killed and is being restarted; the call can be retried", p.cfg.Service, timeout)
		if !errors.Is(err, context.DeadlineExceeded) && status.Code(err) != codes.DeadlineExceeded {
			why = fmt.Sprintf("the handler process of service %q failed a health check (%v), so it was killed and is being restarted; the call can be retried", p.cfg.Service, err)
		}
		p.mu.Lock()
		closed := p.closed
		p.mu.Unlock()
		if closed {
			return
		}
		p.logger.Warn("handler failed its health check; killing it", "service", p.cfg.Service, "pid", c.Pid(), "error", err)
		c.why.Store(&why)
		c.KillNow()
		p.crashed(c)
	}
}

// Close stops the plugin after the calls in flight finish, or after grace,
// whichever comes first.
func (p *Plugin) Close(grace time.Duration) {
	p.Stop(grace, "its handler was stopped")
}

// Stop stops the plugin after the calls in flight finish, or after grace,
// whichever comes first. A call still running then fails with a message
// that gives reason, which completes "was stopped before the call
// finished: ". Stop may be called more than once.
func (p *Plugin) Stop(grace time.Duration, reason string) {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	c := p.client
	// With closed set, no call starts any more (live checks it under
	// mu): none running now means none to wait for. Such a plugin is
	// stopped gracefully whatever the grace, so that it can flush its
	// spans; the wait below, given a zero grace, would not wait, and so
	// kill it with SIGKILL.
	idle := p.busy.Load() == 0
	p.mu.Unlock()
	if idle {
		if c != nil {
			c.Kill()
		}
		return
	}
	if graceful.Wait(&p.inflight, grace) {
		if c != nil {
			c.Kill()
		}
		return
	}
	if c != nil {
		why := fmt.Sprintf("the handler of service %q was stopped before the call finished: %s", p.cfg.Service, reason)
		c.why.CompareAndSwap(nil, &why)
		// The grace is over: the calls still running are not waited for
		// again by a graceful stop.
		c.KillNow()
	}
}

func missingTools(want, have []string) []string {
	var missing []string
	for _, t := range want {
		if !slices.Contains(have, t) {
			missing = append(missing, t)
		}
	}
	return missing
}
