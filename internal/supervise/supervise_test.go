package supervise

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// run is a fake run: ended when the test says, killed when the
// Supervisor says.
type run struct {
	id     int
	ended  atomic.Bool
	killed atomic.Bool
}

func (r *run) Ended() bool { return r.ended.Load() }

var (
	errStopped = errors.New("stopped")
	errStart   = errors.New("the start failed")
)

// fixture is a Supervisor of fake runs whose starts the test scripts:
// each start takes startTook and fails while failStarts is above zero.
type fixture struct {
	sup        *Supervisor[*run]
	mu         sync.Mutex
	starts     int
	startTimes []time.Time
	failStarts int
	startTook  time.Duration
	restarted  []error
	lost       []int
	runs       []*run // the runs that starts made
}

func newFixture() *fixture {
	f := &fixture{}
	f.sup = New(&run{id: 0}, Config[*run]{
		Start: func() (*run, error) {
			time.Sleep(f.startTook)
			f.mu.Lock()
			defer f.mu.Unlock()
			f.starts++
			f.startTimes = append(f.startTimes, time.Now())
			if f.failStarts > 0 {
				f.failStarts--
				return nil, errStart
			}
			r := &run{id: f.starts}
			f.runs = append(f.runs, r)
			return r, nil
		},
		Kill: func(r *run) { r.killed.Store(true) },
		Lost: func(r *run) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.lost = append(f.lost, r.id)
		},
		Restarted: func(_ *run, err error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.restarted = append(f.restarted, err)
		},
		Stopped: errStopped,
		Waiting: func(err error) error { return errors.Join(errors.New("restarting"), err) },
	})
	return f
}

// TestBackoff: the wait before a restart doubles with each failure in a
// row, from MinDelay, up to MaxDelay: what both the plugin host and the
// upstream servers wait.
func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		failures int64
		want     time.Duration
	}{
		{0, 100 * time.Millisecond},
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{7, 6400 * time.Millisecond},
		{8, 10 * time.Second},
		{1000, 10 * time.Second},
	} {
		if got := backoff(tt.failures); got != tt.want {
			t.Errorf("backoff(%d) = %s, want %s", tt.failures, got, tt.want)
		}
	}
}

// TestAcquire: a call gets the current run while it lives; one that finds
// it ended gets a restarted run, after the backoff, or the restart's
// failure; and a run that answered resets the backoff.
func TestAcquire(t *testing.T) {
	for _, tt := range []struct {
		name       string
		end        bool // the first run has ended
		failStarts int
		answered   bool // a call was answered before the crash
		wantErr    error
		wantRun    int // id of the run acquired
		wantStarts int
		wantWait   time.Duration // from the crash to the start
	}{
		{name: "live run", wantRun: 0},
		{name: "ended run restarts after the backoff", end: true, wantRun: 1, wantStarts: 1, wantWait: MinDelay},
		{name: "failed restart goes to the caller that waited", end: true, failStarts: 1, wantErr: errStart, wantStarts: 1, wantWait: MinDelay},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture()
				f.failStarts = tt.failStarts
				first := f.sup.Current()
				crash := time.Now()
				first.ended.Store(tt.end)
				r, err := f.sup.Acquire(context.Background())
				if !errors.Is(err, tt.wantErr) || (err == nil && r.id != tt.wantRun) {
					t.Fatalf("Acquire = run %v, %v; want run %d, %v", r, err, tt.wantRun, tt.wantErr)
				}
				if err == nil {
					f.sup.Release()
				}
				synctest.Wait() // Restarted is told after the waiters
				f.mu.Lock()
				defer f.mu.Unlock()
				if f.starts != tt.wantStarts {
					t.Errorf("%d starts, want %d", f.starts, tt.wantStarts)
				}
				if tt.wantStarts > 0 {
					if got := f.startTimes[0].Sub(crash); got != tt.wantWait {
						t.Errorf("the restart began %s after the crash, want %s", got, tt.wantWait)
					}
					if !first.killed.Load() || len(f.lost) != 1 || len(f.restarted) != 1 {
						t.Errorf("the ended run: killed %v, lost %v, restarts told %v", first.killed.Load(), f.lost, f.restarted)
					}
				}
			})
		})
	}
}

// TestBackoffGrowsAndResets: each failure in a row doubles the wait
// before the next start; a run that answered starts a fresh backoff.
func TestBackoffGrowsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.failStarts = 2
		f.sup.Current().ended.Store(true)
		crash := time.Now()
		for range 2 {
			if _, err := f.sup.Acquire(context.Background()); !errors.Is(err, errStart) {
				t.Fatalf("Acquire = %v, want the start's failure", err)
			}
		}
		r, err := f.sup.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		f.sup.Release()
		var waits []time.Duration
		for i, at := range f.startTimes {
			prev := crash
			if i > 0 {
				prev = f.startTimes[i-1]
			}
			waits = append(waits, at.Sub(prev))
		}
		if want := []time.Duration{MinDelay, 2 * MinDelay, 4 * MinDelay}; !equal(waits, want) {
			t.Errorf("waits before the starts = %v, want %v", waits, want)
		}
		f.sup.Answered()
		r.ended.Store(true)
		crash = time.Now()
		if _, err := f.sup.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		f.sup.Release()
		if got := f.startTimes[len(f.startTimes)-1].Sub(crash); got != MinDelay {
			t.Errorf("after an answer, the restart waited %s, want %s", got, MinDelay)
		}
	})
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOneRestartForAll: the callers that find the run ended all wait for
// one restart; one whose ctx ends first gives up with its own error, and
// the restart goes on without it.
func TestOneRestartForAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.startTook = 5 * time.Second
		f.sup.Current().ended.Store(true)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				r, err := f.sup.Acquire(context.Background())
				if err != nil || r.id != 1 {
					t.Errorf("Acquire = %v, %v; want the restarted run", r, err)
					return
				}
				f.sup.Release()
			})
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := f.sup.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire with a short deadline = %v, want its deadline", err)
		}
		wg.Wait()
		if f.starts != 1 {
			t.Errorf("%d starts for five callers, want 1", f.starts)
		}
	})
}

// TestLost: a run lost between calls (a health check) is restarted at
// once; losing a run already replaced changes nothing; after Stop,
// nothing restarts.
func TestLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		first := f.sup.Current()
		if !f.sup.Lost(first) {
			t.Fatal("Lost reported no restart under way")
		}
		synctest.Wait()
		time.Sleep(MinDelay)
		synctest.Wait()
		if r := f.sup.Current(); r == nil || r.id != 1 || !first.killed.Load() {
			t.Fatalf("after Lost: current %v, first killed %v", r, first.killed.Load())
		}
		f.sup.Lost(first) // replaced already
		synctest.Wait()
		if r := f.sup.Current(); r.id != 1 || f.starts != 1 {
			t.Errorf("losing a replaced run: current %v, %d starts", r, f.starts)
		}
		f.sup.Stop(0)
		if f.sup.Lost(f.sup.Current()) {
			t.Error("Lost after Stop reported a restart")
		}
		if _, err := f.sup.Acquire(context.Background()); err != errStopped {
			t.Errorf("Acquire after Stop = %v, want %v", err, errStopped)
		}
	})
}

// TestStop: Stop waits for the calls in flight, within grace, and says
// whether some outlasted it; a restart that Stop overtakes is ended, and
// its waiters told that the run was stopped.
func TestStop(t *testing.T) {
	for _, tt := range []struct {
		name        string
		call        time.Duration // a call in flight ends after this; 0: none
		grace       time.Duration
		wantOverdue bool
		wantTook    time.Duration
	}{
		{"idle", 0, 0, false, 0},
		{"call ends within grace", time.Second, 5 * time.Second, false, time.Second},
		{"call outlasts grace", 10 * time.Second, 2 * time.Second, true, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture()
				released := make(chan struct{})
				if tt.call > 0 {
					if _, err := f.sup.Acquire(context.Background()); err != nil {
						t.Fatal(err)
					}
					go func() { time.Sleep(tt.call); f.sup.Release(); close(released) }()
				} else {
					close(released)
				}
				start := time.Now()
				last, overdue := f.sup.Stop(tt.grace)
				if took := time.Since(start); last == nil || last.id != 0 || overdue != tt.wantOverdue || took != tt.wantTook {
					t.Errorf("Stop = %v, overdue %v after %s; want the first run, overdue %v after %s", last, overdue, took, tt.wantOverdue, tt.wantTook)
				}
				<-released
			})
		})
	}

	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		f.startTook = time.Second
		f.sup.Current().ended.Store(true)
		got := make(chan error, 1)
		go func() {
			_, err := f.sup.Acquire(context.Background())
			got <- err
		}()
		time.Sleep(MinDelay + time.Millisecond) // the restart is starting
		f.sup.Stop(0)
		if err := <-got; err != errStopped {
			t.Errorf("a caller waiting for a restart that Stop overtook = %v, want %v", err, errStopped)
		}
		synctest.Wait()
		if f.starts != 1 || f.sup.Current() != nil || !f.runs[0].killed.Load() {
			t.Fatalf("%d starts, current %v: want the run that Stop overtook ended, and none current", f.starts, f.sup.Current())
		}
	})
}
