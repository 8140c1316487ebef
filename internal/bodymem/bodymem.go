// Package bodymem bounds the memory that HTTP request bodies hold at once,
// across every request of a server: each body may be bounded, but a
// thousand connections each sending a maximal body slowly held a thousand
// bodies for the read timeout, gigabytes in all. A Budget charges each
// body for the bytes read from it, beyond the first Free bytes, until its
// request ends; a read that would take the bodies past the budget fails
// with an *ExhaustedError, which the server answers with 503.
package bodymem

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// Free is what each body may read without drawing on the budget: small
// requests, which are nearly all of them, are never refused, and hold at
// most Free bytes each besides the budget.
const Free = 64 << 10

// Budget is the memory, in bytes, that the bodies of a server's requests
// may hold at once beyond Free each.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// New returns a budget of limit bytes, or nil, which bounds nothing, for
// a limit of zero or less.
func New(limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: limit}
}

// Limit returns the budget's bound.
func (b *Budget) Limit() int64 { return b.limit }

// InUse returns the bytes the bodies hold of the budget now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// ErrExhausted is what errors.Is finds in every *ExhaustedError.
var ErrExhausted = errors.New("the server holds as many request bodies as it may")

// ExhaustedError is the error of a read that the budget refused.
type ExhaustedError struct{ Limit int64 }

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("the server is receiving as many large request bodies as it may hold at once (%d bytes); retry shortly", e.Limit)
}

func (e *ExhaustedError) Is(target error) bool { return target == ErrExhausted }

// Body charges what is read from a request body to a budget, until
// Release.
type Body struct {
	io.ReadCloser
	budget  *Budget
	read    int64 // bytes read so far
	charged int64 // of them, charged to the budget
	err     error
}

// Wrap returns body charged to b; its Release must be called when the
// request ends. A nil b wraps nothing, and the Body it returns charges
// nothing.
func (b *Budget) Wrap(body io.ReadCloser) *Body {
	return &Body{ReadCloser: body, budget: b}
}

func (r *Body) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.ReadCloser.Read(p)
	r.read += int64(n)
	if r.budget != nil {
		if over := r.read - Free - r.charged; over > 0 {
			if r.budget.used.Add(over) > r.budget.limit {
				r.budget.used.Add(-over)
				r.err = &ExhaustedError{Limit: r.budget.limit}
				return 0, r.err
			}
			r.charged += over
		}
	}
	return n, err
}

// Release gives back what the body was charged: its request is over, and
// whatever holds its bytes with it.
func (r *Body) Release() {
	if r.budget != nil && r.charged > 0 {
		r.budget.used.Add(-r.charged)
		r.charged = 0
	}
}
