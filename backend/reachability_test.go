package backend

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A failed call has the store probed: a store that answers the probe stays reachable (one slow
// statement is no outage); one that does not is unreachable, and calls fail at once, until a
// probe answers again.
func TestReachability(t *testing.T) {
	t.Parallel()
	var answering atomic.Bool
	answering.Store(true)
	var downs atomic.Int32
	r := NewReachability(func(ctx context.Context) error {
		if answering.Load() {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}, 50*time.Millisecond, func(error) { downs.Add(1) }, nil)
	defer r.Close()
	timedOut := errors.New("i/o timeout")

	r.Failed(timedOut)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, r.Check(), "the store answered the probe")

	answering.Store(false)
	r.Failed(timedOut)
	require.Eventually(t, func() bool { return r.Check() != nil }, 2*time.Second, 10*time.Millisecond)
	err := r.Check()
	require.ErrorIs(t, err, ErrUnreachable)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the probe's failure is the reason given")
	require.EqualValues(t, 1, downs.Load())
	r.Failed(timedOut) // while down: nothing more
	require.EqualValues(t, 1, downs.Load())

	answering.Store(true)
	require.Eventually(t, func() bool { return r.Check() == nil }, 2*time.Second, 10*time.Millisecond)
}
