package bodymem

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestBudget: each body reads its first Free bytes without charge, draws
// on the budget for the rest, fails once the bodies would hold more than
// the budget, and gives its charge back on Release.
func TestBudget(t *testing.T) {
	b := New(100 << 10)
	read := func(body *Body, n int) (int64, error) {
		return io.Copy(io.Discard, io.LimitReader(body, int64(n)))
	}
	body := func(n int) *Body { return b.Wrap(io.NopCloser(strings.NewReader(strings.Repeat("x", n)))) }

	small := body(Free)
	if n, err := read(small, Free); n != Free || err != nil || b.InUse() != 0 {
		t.Fatalf("a body of Free bytes: read %d, %v; in use %d, want 0", n, err, b.InUse())
	}
	first := body(Free + 60<<10)
	if _, err := read(first, Free+60<<10); err != nil || b.InUse() != 60<<10 {
		t.Fatalf("the first large body: %v; in use %d, want %d", err, b.InUse(), 60<<10)
	}
	second := body(Free + 60<<10)
	_, err := read(second, Free+60<<10)
	var ex *ExhaustedError
	if !errors.Is(err, ErrExhausted) || !errors.As(err, &ex) || ex.Limit != 100<<10 {
		t.Fatalf("the second large body, past the budget: %v", err)
	}
	if _, err := second.Read(make([]byte, 1)); !errors.Is(err, ErrExhausted) {
		t.Errorf("a read after the refusal: %v", err)
	}
	if got := b.InUse(); got > 100<<10 {
		t.Errorf("in use %d, over the budget", got)
	}
	second.Release()
	first.Release()
	first.Release() // twice gives back nothing more
	small.Release()
	if got := b.InUse(); got != 0 {
		t.Errorf("in use %d once every body is released", got)
	}
	third := body(Free + 90<<10)
	if _, err := read(third, Free+90<<10); err != nil {
		t.Errorf("a large body once the others are released: %v", err)
	}
	third.Release()

	var none *Budget = New(0)
	free := none.Wrap(io.NopCloser(strings.NewReader(strings.Repeat("x", 1<<20))))
	if n, err := io.Copy(io.Discard, free); n != 1<<20 || err != nil {
		t.Errorf("no budget: read %d, %v", n, err)
	}
	free.Release()
}
