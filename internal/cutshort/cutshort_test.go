package cutshort_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolc/toolc/internal/cutshort"
)

func TestMark(t *testing.T) {
	killed := errors.New("signal: killed")
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name    string
		ctx     context.Context
		err     error
		wantBy  bool
		wantMsg string
	}{
		{"live context: a real failure", live, killed, false, "signal: killed"},
		{"ended context: caused by its end", ended, killed, true, "signal: killed"},
		{"already wraps the context's error", ended, fmt.Errorf("start: %w", context.Canceled), true, "start: context canceled"},
		{"no error", ended, nil, false, ""},
	} {
		err := cutshort.Mark(tt.ctx, tt.err)
		if got := cutshort.By(tt.ctx, err); got != tt.wantBy {
			t.Errorf("%s: By = %v, want %v", tt.name, got, tt.wantBy)
		}
		if err == nil {
			if tt.err != nil {
				t.Errorf("%s: Mark lost the error", tt.name)
			}
			continue
		}
		if err.Error() != tt.wantMsg {
			t.Errorf("%s: message %q, want %q", tt.name, err.Error(), tt.wantMsg)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: Mark's error does not wrap %v", tt.name, tt.err)
		}
	}
	// An error not marked is not taken for one the context's end caused,
	// even when it comes after that end: a contract that does not compile.
	if cutshort.By(ended, killed) {
		t.Error("By took an unmarked error for one caused by the context's end")
	}
}
