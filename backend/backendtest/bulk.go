package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

func (h *harness) deleteJobs(tube string, state backend.State, limit int) int {
	h.Helper()
	n, err := h.b.DeleteJobs(h.ctx(), tube, state, limit)
	require.NoError(h, err)
	return n
}

func (h *harness) moveJobs(from, to string, state backend.State, limit int) int {
	h.Helper()
	n, err := h.b.MoveJobs(h.ctx(), from, to, state, limit)
	require.NoError(h, err)
	return n
}

func (h *harness) requireGone(id uint64) {
	h.Helper()
	_, err := h.b.JobStats(h.ctx(), id)
	require.ErrorIs(h, err, backend.ErrNotFound, "job %d should be gone", id)
}

var bulkCases = []testCase{
	{"DeleteJobsDeletesInTheStatesOrderUpToTheLimitAndNoOtherState", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 9})
		b := c.put(job{pri: 1})
		d := c.put(job{pri: 5})
		e := c.put(job{pri: 7})
		buried := c.put(job{})
		held := c.put(job{})
		delayed := c.put(job{delay: time.Hour})
		h.buryAll(c, buried)
		c.reserveID(held)
		require.Equal(h, 2, h.deleteJobs(backend.DefaultTube, backend.Ready, 2))
		h.requireGone(b)
		h.requireGone(d)
		require.Equal(h, []uint64{e, a}, h.listIDs(backend.DefaultTube, backend.Ready, 10))
		n, err := backend.DeleteAll(h.ctx(), h.b, backend.DefaultTube, backend.Ready, 1)
		require.NoError(h, err)
		require.Equal(h, 2, n)
		require.Zero(h, h.deleteJobs(backend.DefaultTube, backend.Reserved, 10), "reserved jobs stay with their holder")
		h.requireState(held, backend.Reserved)
		h.requireState(buried, backend.Buried)
		h.requireState(delayed, backend.Delayed)
		st := h.tubeStats(backend.DefaultTube)
		require.Equal(h, uint64(4), st.CmdDelete)
		require.Zero(h, st.ReadyJobs)
		require.Zero(h, h.stats().UrgentJobs)
		require.Equal(h, 1, h.deleteJobs(backend.DefaultTube, backend.Delayed, 10))
		require.Equal(h, 1, h.deleteJobs(backend.DefaultTube, backend.Buried, 10))
		require.Equal(h, uint64(1), h.stats().ReservedJobs)
		require.Zero(h, h.stats().BuriedJobs+h.stats().DelayedJobs+h.stats().ReadyJobs)
	}},
	{"FlushingATubeNobodyUsesMakesItVanish", func(h *harness) {
		c := h.session().use("gone")
		c.put(job{})
		c.put(job{delay: time.Minute})
		c.use(backend.DefaultTube)
		require.Zero(h, h.deleteJobs("nope", backend.Ready, 10))
		require.Equal(h, 1, h.deleteJobs("gone", backend.Ready, 10))
		require.Equal(h, 1, h.deleteJobs("gone", backend.Delayed, 10))
		h.requireTubeMissing("gone")
	}},
	{"MoveJobsKeepsIDPriorityStateDueTimeAndCounters", func(h *harness) {
		c := h.session().use("from")
		c.watch("from")
		ready := c.put(job{pri: 7})
		delayed := c.put(job{pri: 3, delay: 10 * time.Second})
		buried1, buried2 := c.put(job{pri: 11}), c.put(job{pri: 12})
		held := c.put(job{})
		h.buryAll(c, buried2, buried1)
		c.reserveID(held)
		before := map[uint64]*backend.JobStats{}
		for _, id := range []uint64{ready, delayed, buried1, buried2} {
			before[id] = h.jobStats(id)
		}
		h.advance(time.Second)
		for _, st := range []backend.State{backend.Ready, backend.Delayed, backend.Buried} {
			n, err := backend.MoveAll(h.ctx(), h.b, "from", "to", st, 1)
			require.NoError(h, err)
			require.Positive(h, n, "state %v", st)
		}
		require.Zero(h, h.moveJobs("from", "to", backend.Reserved, 10))
		for id, was := range before {
			now := h.jobStats(id)
			require.Equal(h, "to", now.Tube)
			require.Equal(h, was.State, now.State, "job %d", id)
			require.Equal(h, was.Priority, now.Priority)
			require.Equal(h, was.Buries, now.Buries)
			require.Equal(h, was.Reserves, now.Reserves)
			require.Equal(h, was.Age+time.Second, now.Age)
		}
		require.Equal(h, 9*time.Second, h.jobStats(delayed).TimeLeft)
		require.Equal(h, []uint64{buried2, buried1}, h.listIDs("to", backend.Buried, 10))
		from, to := h.tubeStats("from"), h.tubeStats("to")
		require.Equal(h, uint64(1), from.ReservedJobs)
		require.Zero(h, from.ReadyJobs+from.DelayedJobs+from.BuriedJobs)
		require.Equal(h, [3]uint64{1, 1, 2}, [3]uint64{to.ReadyJobs, to.DelayedJobs, to.BuriedJobs})
		require.Equal(h, uint64(1), to.UrgentJobs)
		require.Equal(h, uint64(5), h.stats().TotalJobs)

		w := h.session().watch("to").ignore(backend.DefaultTube)
		w.reserveID(ready)
		h.advance(9 * time.Second)
		w.reserveID(delayed)
		require.Equal(h, uint64(2), h.kick("to", 5))
	}},
	{"AMovedReadyJobGoesToAReserveWaitingOnItsNewTube", func(h *harness) {
		c := h.session().use("src")
		id := c.put(job{})
		p := h.session().watch("dst").ignore(backend.DefaultTube).reserveAsync(forever)
		require.Equal(h, 1, h.moveJobs("src", "dst", backend.Ready, 10))
		p.requireJob(id)
	}},
	{"MovingToItsOwnTubeOrFromAMissingOneMovesNothing", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		require.Zero(h, h.moveJobs(backend.DefaultTube, backend.DefaultTube, backend.Ready, 10))
		require.Zero(h, h.moveJobs("nope", backend.DefaultTube, backend.Ready, 10))
		h.requireTubeMissing("nope")
		require.Equal(h, backend.DefaultTube, h.jobStats(id).Tube)
	}},
	{"MovingEveryJobOutOfATubeNobodyUsesMakesItVanish", func(h *harness) {
		c := h.session().use("old")
		id := c.put(job{})
		c.use(backend.DefaultTube)
		require.Equal(h, 1, h.moveJobs("old", "new", backend.Ready, 10))
		h.requireTubeMissing("old")
		require.Equal(h, "new", h.jobStats(id).Tube)
		require.Equal(h, []uint64{id}, h.listIDs("new", backend.Ready, 10))
	}},
}
