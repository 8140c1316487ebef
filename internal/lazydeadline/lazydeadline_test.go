package lazydeadline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestWithDeadline holds the lazy context to what context.WithTimeout
// would give, in each way a call can end. Each case runs in a synctest
// bubble, so that a deadline passes when the test says, not when a sleep
// on a busy machine happens to end.
func TestWithDeadline(t *testing.T) {
	const short = 20 * time.Millisecond
	tests := []struct {
		name string
		// timeout is the call's; parentTimeout, when set, the caller's.
		timeout, parentTimeout time.Duration
		cancelParent           bool
		release                bool
		// arm has the test wait on Done before the call ends.
		arm     bool
		wantErr error
	}{
		{name: "running", timeout: time.Hour},
		{name: "deadline passed, never armed", timeout: short, wantErr: context.DeadlineExceeded},
		{name: "deadline passed, armed", timeout: short, arm: true, wantErr: context.DeadlineExceeded},
		{name: "released", timeout: time.Hour, release: true, wantErr: context.Canceled},
		{name: "released after the deadline", timeout: short, release: true, wantErr: context.DeadlineExceeded},
		{name: "parent cancelled, never armed", timeout: time.Hour, cancelParent: true, wantErr: context.Canceled},
		{name: "parent cancelled, armed", timeout: time.Hour, cancelParent: true, arm: true, wantErr: context.Canceled},
		{name: "parent's deadline first", timeout: time.Hour, parentTimeout: short, arm: true, wantErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.parentTimeout > 0 {
					var c2 context.CancelFunc
					parent, c2 = context.WithTimeout(parent, tt.parentTimeout)
					defer c2()
				}
				ctx, release := WithDeadline(parent, time.Now().Add(tt.timeout))
				defer release()

				wantDeadline := ctx.(*lazyContext).deadline
				if tt.parentTimeout > 0 {
					wantDeadline, _ = parent.Deadline()
				}
				if d, ok := ctx.Deadline(); !ok || !d.Equal(wantDeadline) {
					t.Errorf("Deadline() = %v, %v; want %v", d, ok, wantDeadline)
				}

				var done <-chan struct{}
				if tt.arm {
					done = ctx.Done()
				}
				if tt.cancelParent {
					cancel()
				}
				if tt.timeout == short || tt.parentTimeout == short {
					time.Sleep(2 * short)
					synctest.Wait() // for the timers that fired to have run
				}
				if tt.release {
					release()
				}
				if done != nil && tt.wantErr != nil {
					select {
					case <-done:
					case <-time.After(5 * time.Second):
						t.Fatal("Done was not closed")
					}
				}
				if err := ctx.Err(); !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Errorf("Err() = %v, want %v", err, tt.wantErr)
				}
				// A Done asked for only now is closed at once when the context
				// has ended, and open while it runs.
				select {
				case <-ctx.Done():
					if tt.wantErr == nil {
						t.Error("Done is closed while the call runs")
					}
				default:
					if tt.wantErr != nil {
						t.Error("Done is open after the context ended")
					}
				}
			})
		})
	}
}

// TestDerived: contexts derived from the lazy one, and
// context.AfterFunc on it, end with it, with its error.
func TestDerived(t *testing.T) { synctest.Test(t, testDerived) }

func testDerived(t *testing.T) {
	ctx, release := WithDeadline(context.Background(), time.Now().Add(30*time.Millisecond))
	defer release()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	var ran atomic.Bool
	afterDone := make(chan struct{})
	context.AfterFunc(ctx, func() { ran.Store(true); close(afterDone) })
	stopped := context.AfterFunc(ctx, func() { t.Error("a stopped AfterFunc ran") })
	if !stopped() {
		t.Error("stop of a pending AfterFunc reported false")
	}

	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the derived context did not end at the call's deadline")
	}
	if err := child.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("derived Err() = %v, want the deadline", err)
	}
	select {
	case <-afterDone:
	case <-time.After(5 * time.Second):
		t.Fatal("context.AfterFunc did not run")
	}
	if !ran.Load() {
		t.Error("AfterFunc did not run")
	}
	// Registered after the end, it runs at once.
	late := make(chan struct{})
	context.AfterFunc(ctx, func() { close(late) })
	select {
	case <-late:
	case <-time.After(5 * time.Second):
		t.Fatal("an AfterFunc registered after the end did not run")
	}
}

// TestValue: values come from the parent.
func TestValue(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	ctx, release := WithDeadline(parent, time.Now().Add(time.Hour))
	defer release()
	if got := ctx.Value(key{}); got != "v" {
		t.Errorf("Value = %v", got)
	}
}
