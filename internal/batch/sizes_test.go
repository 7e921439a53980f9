package batch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Which queue may go out beside batches in flight: only a single call, while batches have lately
// held single calls (few callers); never while callers share batches, never beyond max.
func TestMayAdd(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		sent                     []int // batch sizes recorded, oldest first
		inFlight, flying, queued int
		want                     bool
	}{
		{"nothing in flight", []int{5, 5, 5}, 0, 0, 5, true},
		{"a single call beside a single call", []int{1, 1, 1}, 1, 1, 1, true},
		{"before any batch", nil, 1, 1, 1, true},
		{"batches lately shared", []int{1, 4, 4, 4, 4, 4}, 1, 1, 1, false},
		{"a shared past forgotten", []int{8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, 1, 1, true},
		{"the batch in flight holds several calls", []int{1}, 1, 3, 1, false},
		{"several calls queued", []int{1}, 1, 1, 2, false},
		{"a leader about to form its batch", []int{1}, 1, 0, 1, false},
		{"max in flight already", []int{1}, 2, 2, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s sizes
			for _, n := range tc.sent {
				s.sent(n)
			}
			require.Equal(t, tc.want, s.mayAdd(tc.inFlight, tc.flying, tc.queued, 2))
		})
	}
}

// With one batch in flight at most, nothing goes out beside it, however small the batches.
func TestMayAddOneInFlight(t *testing.T) {
	var s sizes
	s.sent(1)
	require.True(t, s.mayAdd(0, 0, 1, 1))
	require.False(t, s.mayAdd(1, 1, 1, 1))
}

// A run of single calls brings the average below the bar however long batches were shared, and
// stays there: the average does not stick above it (integer rounding).
func TestSentAverages(t *testing.T) {
	var s sizes
	for range 100 {
		s.sent(6)
	}
	require.InDelta(t, 6<<10, s.avg, 64)
	for range 60 {
		s.sent(1)
	}
	require.Less(t, s.avg, fewCalls)
	require.InDelta(t, 1<<10, s.avg, 64)
}
