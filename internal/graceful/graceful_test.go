package graceful_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolc/toolc/internal/graceful"
)

// TestWait: Wait returns when the work finishes if it does within the
// grace period, and when the period is over if it does not, never later;
// with nothing in flight it returns at once; with no grace it does not
// wait at all.
func TestWait(t *testing.T) {
	for _, tt := range []struct {
		name        string
		work, grace time.Duration // work < 0: nothing in flight
		finished    bool
		took        time.Duration
	}{
		{"nothing in flight", -1, time.Second, true, 0},
		{"nothing in flight, no grace", -1, 0, false, 0},
		{"finishes within the grace", 300 * time.Millisecond, time.Second, true, 300 * time.Millisecond},
		{"outlasts the grace", 5 * time.Second, time.Second, false, time.Second},
		{"no grace", time.Second, 0, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var inflight sync.WaitGroup
				if tt.work >= 0 {
					inflight.Go(func() { time.Sleep(tt.work) })
				}
				start := time.Now()
				finished := graceful.Wait(&inflight, tt.grace)
				if took := time.Since(start); finished != tt.finished || took != tt.took {
					t.Errorf("Wait = %v after %s, want %v after %s", finished, took, tt.finished, tt.took)
				}
				inflight.Wait() // the work's goroutine ends inside the bubble
			})
		})
	}
}
