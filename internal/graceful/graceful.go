// Package graceful waits for work in flight to finish, for at most a grace
// period: what the plugin host does before it kills a stopped plugin, and
// toolc dev before it stops a replaced one.
package graceful

import (
	"sync"
	"time"
)

// Wait waits for inflight's count to reach zero, or for d to pass,
// whichever comes first, and reports whether the work finished. It never
// waits longer than d: when the work outlasts it, a goroutine goes on
// waiting for inflight until it does finish, which is why the caller
// then stops the work (kills the plugin) rather than leave it running.
// A d of zero or less waits for nothing and reports false: a
// sync.WaitGroup cannot say, without waiting, that it is at zero, so a
// caller that must tell an idle plugin from a busy one counts its work
// itself (as internal/supervise does).
func Wait(inflight *sync.WaitGroup, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	done := make(chan struct{})
	go func() { inflight.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
