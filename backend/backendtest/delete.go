package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var deleteCases = []testCase{
	{"DeleteRemovesAJobInAnyStateButAnotherSessionsReservation", func(h *harness) {
		c := h.session()
		for _, state := range []backend.State{backend.Ready, backend.Delayed, backend.Buried} {
			id := h.jobInState(c, state)
			require.NoError(h, h.b.Delete(h.ctx(), h.session().id, id), "any session deletes a %s job", state)
		}
		mine := h.jobInState(c, backend.Reserved)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, mine))
		other := h.session()
		theirs := h.jobInState(other, backend.Reserved)
		require.ErrorIs(h, h.b.Delete(h.ctx(), c.id, theirs), backend.ErrNotFound)
		h.requireState(theirs, backend.Reserved)
		require.NoError(h, h.b.Delete(h.ctx(), other.id, theirs))
		st := h.stats()
		require.Zero(h, st.ReadyJobs+st.DelayedJobs+st.BuriedJobs+st.ReservedJobs)
	}},
	{"DeleteOfAMissingOrDeletedJobIsNotFound", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		for _, missing := range []uint64{id, 0, id + 1} {
			require.ErrorIs(h, h.b.Delete(h.ctx(), c.id, missing), backend.ErrNotFound)
			_, err := h.b.JobStats(h.ctx(), missing)
			require.ErrorIs(h, err, backend.ErrNotFound)
		}
	}},
	{"DeleteCountsOnlySuccessesInItsTube", func(h *harness) {
		c := h.session().use("t")
		a := c.put(job{})
		b := c.put(job{})
		other := h.session().watch("t")
		other.reserveID(a)
		require.ErrorIs(h, h.b.Delete(h.ctx(), c.id, a), backend.ErrNotFound)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, b))
		require.Equal(h, uint64(1), h.tubeStats("t").CmdDelete)
		require.Zero(h, h.tubeStats(backend.DefaultTube).CmdDelete)
	}},
	{"DeletingAReservedJobStopsItsTTR", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: time.Second})
		c.reserveID(id)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		h.advance(time.Minute)
		require.Zero(h, h.stats().JobTimeouts)
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"DeletingADelayedJobStopsItsDelay", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Second})
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		h.advance(time.Minute)
		c.requireNothing(backend.ErrTimedOut)
		require.Zero(h, h.stats().ReadyJobs)
	}},
}
