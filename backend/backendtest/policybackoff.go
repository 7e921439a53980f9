package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// requireBackedOff requires that job id is delayed by backoff (its delay, and due backoff after
// it came back: still delayed a moment before, ready at it), then moves the clock there.
func (h *harness) requireBackedOff(id uint64, backoff time.Duration) {
	h.Helper()
	st := h.jobStats(id)
	require.Equal(h, backend.Delayed, st.State, "job %d should be backed off", id)
	require.Equal(h, backoff, st.Delay, "backoff of job %d", id)
	h.advance(backoff - time.Millisecond)
	h.requireState(id, backend.Delayed)
	h.advance(time.Millisecond)
	h.requireState(id, backend.Ready)
}

var retryDelayCases = []testCase{
	{"ATTRRunningOutBacksOffOneTwoFourSeconds", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second})
		seen := h.observeActions()
		c := h.worker("work")
		id := c.put(job{ttr: 5 * time.Second})
		for _, backoff := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			c.reserveID(id)
			h.advance(5 * time.Second)
			h.requireBackedOff(id, backoff)
		}
		st := h.jobStats(id)
		require.Equal(h, uint32(3), st.Reserves)
		require.Equal(h, uint32(3), st.Timeouts)
		require.Zero(h, st.Releases)
		require.Equal(h, uint64(3), h.stats().JobTimeouts)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyRetryDelay, Action: backend.ActionDelay, Job: id})
	}},
	{"ABackoffOverByTheTimeTheStoreLooksLeavesTheJobReadySinceItEnded", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: 2 * time.Second})
		c := h.worker("work")
		id := c.put(job{ttr: 5 * time.Second})
		c.reserveID(id)
		h.advance(8 * time.Second) // the TTR ran out 3 s ago, its 2 s backoff 1 s ago
		j := c.reserveNow()
		require.Equal(h, id, j.ID)
		require.True(h, j.HasReadyFor)
		require.Equal(h, time.Second, j.ReadyFor)
		st := h.jobStats(id)
		require.Equal(h, 2*time.Second, st.Delay)
		require.Equal(h, uint32(1), st.Timeouts)
	}},
	{"AReleaseWithDelayZeroIsBackedOff", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second})
		c := h.worker("work")
		id := c.put(job{})
		for _, backoff := range []time.Duration{time.Second, 2 * time.Second} {
			c.reserveID(id)
			require.NoError(h, c.release(id, 3, 0))
			ts := h.tubeStats("work")
			require.Equal(h, uint64(1), ts.DelayedJobs)
			require.Zero(h, ts.ReadyJobs)
			c.requireNothing(backend.ErrTimedOut)
			h.requireBackedOff(id, backoff)
		}
		st := h.jobStats(id)
		require.Equal(h, uint32(3), st.Priority) // the release's
		require.Equal(h, uint32(2), st.Releases)
	}},
	{"AReleaseWithADelayKeepsTheClientsDelay", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Minute})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 5*time.Second))
		h.requireBackedOff(id, 5*time.Second)
	}},
	{"AHolderLeavingBacksOff", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: 2 * time.Second})
		c := h.worker("work")
		id := c.put(job{ttr: time.Hour})
		c.reserveID(id)
		p := h.worker("work").reserveAsync(forever)
		c.end()
		st := h.jobStats(id)
		require.Equal(h, backend.Delayed, st.State)
		require.Equal(h, 2*time.Second, st.Delay)
		p.requireWaiting() // not handed to a waiting reserve before its time
		h.advance(2 * time.Second)
		p.requireJob(id)
	}},
	{"TheBackoffStopsAtRetryDelayMax", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second, RetryDelayMax: 3 * time.Second})
		c := h.worker("work")
		id := c.put(job{})
		for _, backoff := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
			c.reserveID(id)
			require.NoError(h, c.release(id, 0, 0))
			h.requireBackedOff(id, backoff)
		}
	}},
	{"WithMaxReservesItBacksOffThenBuries", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second, MaxReserves: 3})
		seen := h.observeActions()
		c := h.worker("work")
		id := c.put(job{ttr: 5 * time.Second})
		for _, backoff := range []time.Duration{time.Second, 2 * time.Second} {
			c.reserveID(id)
			h.advance(5 * time.Second)
			h.requireBackedOff(id, backoff)
		}
		c.reserveID(id)
		h.advance(5 * time.Second)
		st := h.jobStats(id)
		require.Equal(h, backend.Buried, st.State)
		require.Equal(h, uint32(3), st.Timeouts)
		require.Equal(h, uint32(1), st.Buries)
		require.Zero(h, h.tubeStats("work").DelayedJobs)
		seen.requireSeen(h, backend.PolicyAction{Tube: "work", Policy: backend.PolicyMaxReserves, Action: backend.ActionBury, Job: id})
	}},
	{"AReleaseAtMaxReservesStillAnswersBuried", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second, MaxReserves: 1})
		c := h.worker("work")
		id := c.put(job{})
		c.reserveID(id)
		require.ErrorIs(h, c.release(id, 0, 0), backend.ErrBuried)
		h.requireState(id, backend.Buried)
	}},
	{"BuryAndDeleteByTheHolderAreUnchanged", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second})
		c := h.worker("work")
		a, b := c.put(job{}), c.put(job{})
		c.reserveID(a)
		c.bury(a)
		h.requireState(a, backend.Buried)
		c.reserveID(b)
		c.delete(b)
		h.requireGone(b)
	}},
	{"OtherTubesAreUntouched", func(h *harness) {
		h.setPolicy(backend.Policy{Tube: "work", RetryDelay: time.Second})
		c := h.worker("other")
		id := c.put(job{ttr: 5 * time.Second})
		c.reserveID(id)
		require.NoError(h, c.release(id, 0, 0))
		h.requireState(id, backend.Ready)
		c.reserveID(id)
		h.advance(5 * time.Second)
		h.requireState(id, backend.Ready)
	}},
}
