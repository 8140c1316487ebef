package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolc/toolc/internal/supervise"
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
	sup    *supervise.Supervisor[*proc]
	// probe asks the health check to run now.
	probe chan struct{}
}

// proc is one process of a plugin. why, once set, is what the calls in
// flight on it are told when it goes: the host killed it, and why.
type proc struct {
	*rpc.Client
	why atomic.Pointer[string]
}

// Ended reports whether the process exited, for the supervisor.
func (c *proc) Ended() bool { return c.Exited() }

var _ runtime.Dispatcher = (*Plugin)(nil)

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
	p := &Plugin{cfg: cfg, logger: logger, tools: tools, probe: make(chan struct{}, 1)}
	p.sup = supervise.New(&proc{Client: c}, supervise.Config[*proc]{
		Start: p.start,
		Kill:  func(c *proc) { c.Kill() },
		Lost:  func(*proc) { logger.Warn("handler exited", "service", cfg.Service) },
		Restarted: func(c *proc, err error) {
			if err == nil {
				logger.Info("handler restarted", "service", cfg.Service, "pid", c.Pid())
			}
		},
		Stopped: fmt.Errorf("the handler of service %q has been stopped", cfg.Service),
		Waiting: func(err error) error {
			return fmt.Errorf("the handler of service %q is restarting after a crash: %w", cfg.Service, err)
		},
	})
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
	c := p.sup.Current()
	if c == nil || c.Exited() {
		return 0
	}
	return c.Pid()
}

// Call runs a tool on the plugin, restarting the plugin first if it died.
func (p *Plugin) Call(ctx context.Context, tool, callID string, args json.RawMessage, onEvent func(plugins.Event)) (*plugins.Result, error) {
	c, err := p.sup.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer p.sup.Release()
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
	if err == nil {
		p.sup.Answered() // a plugin that answers again starts a fresh backoff
	}
	return res, err
}

// exitedDuringCall records that c died during a call, and says so, and
// what happens next.
func (p *Plugin) exitedDuringCall(c *proc) error {
	restarting := p.sup.Lost(c)
	how := ""
	if s := c.ExitStatus(); s != "" {
		how = " (" + s + ")"
	}
	if !restarting {
		return fmt.Errorf("the handler process of service %q exited during the call%s; it is not restarted, as the handler is being stopped", p.cfg.Service, how)
	}
	return fmt.Errorf("the handler process of service %q exited during the call%s; it is being restarted, so the call can be retried", p.cfg.Service, how)
}

// start starts the plugin again, for a restart, bounded by the start
// timeout of the plugin's configuration; a plugin that lacks a tool it
// had is not taken.
func (p *Plugin) start() (*proc, error) {
	c, err := rpc.Start(context.Background(), p.cfg)
	if err != nil {
		return nil, fmt.Errorf("restarting the handler of service %q: %w", p.cfg.Service, err)
	}
	if missing := missingTools(p.tools, c.Tools()); len(missing) > 0 {
		c.Kill()
		return nil, fmt.Errorf("the restarted handler of service %q lacks tools %s", p.cfg.Service, strings.Join(missing, ", "))
	}
	return &proc{Client: c}, nil
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
		case <-p.sup.Done():
			return
		case <-tick.C:
		case <-p.probe:
		}
		c := p.sup.Current()
		if c == nil {
			continue
		}
		if c.Exited() {
			p.sup.Lost(c)
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
		select {
		case <-p.sup.Done():
			return
		default:
		}
		p.logger.Warn("handler failed its health check; killing it", "service", p.cfg.Service, "pid", c.Pid(), "error", err)
		c.why.Store(&why)
		c.KillNow()
		p.sup.Lost(c)
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
	// A plugin with no call in flight is stopped gracefully whatever the
	// grace, so that it can flush its spans.
	c, overdue := p.sup.Stop(grace)
	if c == nil {
		return
	}
	if overdue {
		why := fmt.Sprintf("the handler of service %q was stopped before the call finished: %s", p.cfg.Service, reason)
		c.why.CompareAndSwap(nil, &why)
		// The grace is over: the calls still running are not waited for
		// again by a graceful stop.
		c.KillNow()
		return
	}
	c.Kill()
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
