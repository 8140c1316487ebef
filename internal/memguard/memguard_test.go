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

// TestLimit: $TOOLC_MAX_MEMORY sets the limit, as a size; unset, it is
// DefaultLimit; a value that is not a size is an error.
func TestLimit(t *testing.T) {
	for v, want := range map[string]int64{"": DefaultLimit, "8GiB": 8 << 30, "512MiB": 512 << 20} {
		got, err := Limit(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("Limit with %q = %d, %v; want %d", v, got, err, want)
		}
	}
	if _, err := Limit(func(string) string { return "lots" }); err == nil {
		t.Error(`Limit with "lots" = nil error`)
	}
}
