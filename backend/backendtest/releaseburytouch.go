package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// jobInState puts a job and brings it into state; a reserved job is held by c.
func (h *harness) jobInState(c *client, state backend.State) uint64 {
	h.Helper()
	switch state {
	case backend.Delayed:
		return c.put(job{delay: time.Hour})
	case backend.Ready:
		return c.put(job{})
	}
	id := c.put(job{})
	_, err := h.b.ReserveJob(h.ctx(), c.id, id)
	require.NoError(h, err)
	if state == backend.Buried {
		require.NoError(h, h.b.Bury(h.ctx(), c.id, id, 0))
	}
	return id
}

var releaseBuryTouchCases = []testCase{
	{"ReleaseReturnsTheJobToReadyWithItsNewPriority", func(h *harness) {
		c := h.session()
		id := c.put(job{pri: 10})
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id, Priority: 20}))
		st := h.jobStats(id)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, uint32(20), st.Priority)
		require.Equal(h, uint32(1), st.Releases)
		require.Zero(h, h.stats().ReservedJobs)
		c.reserveID(id)
	}},
	{"ReleaseWithADelayMakesTheJobDelayed", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id, Priority: 1, Delay: 4 * time.Second}))
		st := h.jobStats(id)
		require.Equal(h, backend.Delayed, st.State)
		require.Equal(h, 4*time.Second, st.Delay)
		require.Equal(h, 4*time.Second, st.TimeLeft)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(4 * time.Second)
		c.reserveID(id)
	}},
	{"ReleaseWakesAWaitingReserve", func(h *harness) {
		owner := h.session()
		id := owner.put(job{})
		owner.reserveID(id)
		p := h.session().reserveAsync(forever)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: owner.id, ID: id}))
		p.requireJob(id)
	}},
	{"ReleaseBuryAndTouchByAnotherSessionAreNotFound", func(h *harness) {
		owner := h.session()
		other := h.session()
		id := owner.put(job{})
		owner.reserveID(id)
		require.ErrorIs(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: other.id, ID: id}), backend.ErrNotFound)
		require.ErrorIs(h, h.b.Bury(h.ctx(), other.id, id, 0), backend.ErrNotFound)
		require.ErrorIs(h, h.b.Touch(h.ctx(), other.id, id), backend.ErrNotFound)
		st := h.jobStats(id)
		require.Equal(h, backend.Reserved, st.State)
		require.Zero(h, st.Releases)
		require.Zero(h, st.Buries)
	}},
	{"ReleaseBuryAndTouchOfAJobNotReservedAreNotFound", func(h *harness) {
		c := h.session()
		for _, state := range []backend.State{backend.Ready, backend.Delayed, backend.Buried} {
			id := h.jobInState(c, state)
			require.ErrorIs(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id}), backend.ErrNotFound, state.String())
			require.ErrorIs(h, h.b.Bury(h.ctx(), c.id, id, 0), backend.ErrNotFound, state.String())
			require.ErrorIs(h, h.b.Touch(h.ctx(), c.id, id), backend.ErrNotFound, state.String())
			h.requireState(id, state)
		}
		missing := uint64(1 << 40)
		require.ErrorIs(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: missing}), backend.ErrNotFound)
		require.ErrorIs(h, h.b.Bury(h.ctx(), c.id, missing, 0), backend.ErrNotFound)
		require.ErrorIs(h, h.b.Touch(h.ctx(), c.id, missing), backend.ErrNotFound)
	}},
	{"BuryAppendsToTheBuriedListWithItsNewPriority", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 1})
		b := c.put(job{pri: 2})
		c.reserveID(a)
		c.reserveID(b)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, b, 9))
		require.NoError(h, h.b.Bury(h.ctx(), c.id, a, 8))
		st := h.jobStats(b)
		require.Equal(h, backend.Buried, st.State)
		require.Equal(h, uint32(9), st.Priority)
		require.Equal(h, uint32(1), st.Buries)
		require.Zero(h, st.TimeLeft)
		require.Equal(h, uint64(2), h.tubeStats(backend.DefaultTube).BuriedJobs)
		c.requireNothing(backend.ErrTimedOut)
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 1))
		h.requireState(b, backend.Ready)
		h.requireState(a, backend.Buried)
	}},
	{"BuriedJobHasNoTTR", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: time.Second})
		c.reserveID(id)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, id, 0))
		h.advance(time.Minute)
		h.requireState(id, backend.Buried)
		require.Zero(h, h.stats().JobTimeouts)
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"TouchResetsTheDeadlineToTheFullTTR", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: 10 * time.Second})
		c.reserveID(id)
		h.advance(8 * time.Second)
		require.NoError(h, h.b.Touch(h.ctx(), c.id, id))
		require.Equal(h, 10*time.Second, h.jobStats(id).TimeLeft)
		h.advance(9 * time.Second)
		h.requireState(id, backend.Reserved)
		h.advance(time.Second)
		h.requireState(id, backend.Ready)
		require.Equal(h, uint32(1), h.jobStats(id).Timeouts)
	}},
}
