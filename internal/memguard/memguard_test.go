package memguard

import (
	"testing"
	"time"
)

// TestWatch: a limit below what the process holds is reported once, and
// a stopped watch reports nothing.
func TestWatch(t *testing.T) {
	got := make(chan uint64, 2)
	stop := Watch(1, func(used uint64) { got <- used })
	defer stop()
	select {
	case used := <-got:
		if used <= 1 {
			t.Errorf("exceeded with %d bytes in use", used)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a limit of one byte was not reported within 5s")
	}
	select {
	case <-got:
		t.Error("reported twice")
	case <-time.After(3 * interval):
	}

	quiet := make(chan uint64, 1)
	Watch(1, func(used uint64) { quiet <- used })()
	select {
	case <-quiet:
		t.Error("a stopped watch reported")
	case <-time.After(3 * interval):
	}
}
