package kv

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestRetryConflicts: only a write conflict is retried, with doubling
// backoffs, until fn succeeds, the attempts run out or ctx ends.
func TestRetryConflicts(t *testing.T) {
	conflict := fmt.Errorf("%w on key %q", ErrWriteConflict, "k")
	ctx := context.Background()

	var backoffs []time.Duration
	calls := 0
	err := RetryConflicts(ctx, 0, func(d time.Duration) { backoffs = append(backoffs, d) }, func() error {
		if calls++; calls < 4 {
			return conflict
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Fatalf("err %v after %d calls, want nil after 4", err, calls)
	}
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}; fmt.Sprint(backoffs) != fmt.Sprint(want) {
		t.Fatalf("backoffs %v, want %v", backoffs, want)
	}

	calls = 0
	other := errors.New("not a conflict")
	if err := RetryConflicts(ctx, 0, nil, func() error { calls++; return other }); err != other || calls != 1 {
		t.Fatalf("other error: %v after %d calls, want it after 1", err, calls)
	}

	calls = 0
	if err := RetryConflicts(ctx, 3, nil, func() error { calls++; return conflict }); !errors.Is(err, ErrWriteConflict) || calls != 3 {
		t.Fatalf("bounded: %v after %d calls, want a conflict after 3", err, calls)
	}

	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = RetryConflicts(cctx, 0, nil, func() error {
		if calls++; calls == 2 {
			cancel()
		}
		return conflict
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrWriteConflict) || calls != 2 {
		t.Fatalf("cancelled: %v after %d calls, want the conflict and context.Canceled after 2", err, calls)
	}
}
