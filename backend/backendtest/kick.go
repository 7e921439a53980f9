package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// buryAll reserves and buries the given ready jobs of c's watched tubes, in order.
func (h *harness) buryAll(c *client, ids ...uint64) {
	h.Helper()
	for _, id := range ids {
		_, err := h.b.ReserveJob(h.ctx(), c.id, id)
		require.NoError(h, err)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, id, 0))
	}
}

var kickCases = []testCase{
	{"KickHandsKickedJobsToAWaiterInTheOrderTheyMove", func(h *harness) {
		// beanstalkd moves kicked jobs one by one, each handed at once to a waiting reserve: the
		// one waiter gets the first kicked (the soonest delayed, the oldest buried), not the best
		// priority (found by the timed differential test on Redis).
		for _, buried := range []bool{false, true} {
			c := h.session().use("k").watch("k")
			first := c.put(job{pri: 100, delay: time.Minute})
			second := c.put(job{pri: 0, delay: 2 * time.Minute})
			if buried {
				for _, id := range []uint64{first, second} {
					require.NoError(h, h.b.KickJob(h.ctx(), id))
					c.reserveID(id)
					require.NoError(h, h.b.Bury(h.ctx(), c.id, id, map[uint64]uint32{first: 100, second: 0}[id]))
				}
			}
			p := h.session().watch("k").ignore(backend.DefaultTube).reserveAsync(forever)
			require.Equal(h, uint64(2), h.kick("k", 10))
			p.requireJob(first)
			h.requireState(second, backend.Ready)
			require.NoError(h, h.b.Delete(h.ctx(), c.id, second))
			c.end()
		}
	}},
	{"KickMovesBuriedJobsOldestFirstUpToTheBound", func(h *harness) {
		c := h.session()
		a, b, d := c.put(job{}), c.put(job{}), c.put(job{})
		h.buryAll(c, d, a, b)
		require.Equal(h, uint64(2), h.kick(backend.DefaultTube, 2))
		h.requireState(d, backend.Ready)
		h.requireState(a, backend.Ready)
		h.requireState(b, backend.Buried)
		st := h.jobStats(d)
		require.Equal(h, uint32(1), st.Kicks)
		require.Equal(h, uint32(1), st.Buries)
	}},
	{"KickNeverMixesBuriedAndDelayed", func(h *harness) {
		c := h.session()
		buried := c.put(job{})
		h.buryAll(c, buried)
		for range 3 {
			c.put(job{delay: time.Hour})
		}
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 5))
		require.Equal(h, uint64(3), h.stats().DelayedJobs)
		require.Equal(h, uint64(3), h.kick(backend.DefaultTube, 5))
		require.Zero(h, h.stats().DelayedJobs)
		require.Equal(h, uint64(4), h.stats().ReadyJobs)
	}},
	{"KickMovesDelayedJobsSoonestFirstAndKeepsTheirDelay", func(h *harness) {
		c := h.session()
		late := c.put(job{delay: 9 * time.Second})
		soon := c.put(job{delay: 2 * time.Second})
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 1))
		st := h.jobStats(soon)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, 2*time.Second, st.Delay)
		require.Zero(h, st.TimeLeft)
		require.Equal(h, uint32(1), st.Kicks)
		h.requireState(late, backend.Delayed)
	}},
	{"KickOfAMissingTubeOrWithBoundZeroKicksNothing", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Hour})
		require.Zero(h, h.kick("missing", 10))
		h.requireTubeMissing("missing")
		require.Zero(h, h.kick(backend.DefaultTube, 0))
		h.requireState(id, backend.Delayed)
	}},
	{"KickOnlyTouchesItsTube", func(h *harness) {
		c := h.session()
		here := c.put(job{delay: time.Hour})
		there := c.use("other").put(job{delay: time.Hour})
		require.Equal(h, uint64(1), h.kick("other", 10))
		h.requireState(here, backend.Delayed)
		h.requireState(there, backend.Ready)
	}},
	{"KickWakesAWaitingReserve", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Hour})
		p := h.session().reserveAsync(forever)
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 1))
		p.requireJob(id)
	}},
	{"KickedJobsInAPausedTubeWaitForTheUnpause", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Hour})
		h.pause(backend.DefaultTube, time.Hour)
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 1))
		h.requireState(id, backend.Ready)
		c.requireNothing(backend.ErrTimedOut)
		h.pause(backend.DefaultTube, 0)
		c.reserveID(id)
	}},
	{"KickJobMovesABuriedOrDelayedJobInAnyTube", func(h *harness) {
		c := h.session().use("other").watch("other")
		buried := c.put(job{})
		h.buryAll(c, buried)
		delayed := c.put(job{delay: time.Hour})
		for _, id := range []uint64{delayed, buried} {
			require.NoError(h, h.b.KickJob(h.ctx(), id))
			st := h.jobStats(id)
			require.Equal(h, backend.Ready, st.State)
			require.Equal(h, uint32(1), st.Kicks)
		}
	}},
	{"KickJobOfAReadyReservedOrMissingJobIsNotFound", func(h *harness) {
		c := h.session()
		ready := h.jobInState(c, backend.Ready)
		reserved := h.jobInState(c, backend.Reserved)
		for _, id := range []uint64{ready, reserved, 0, reserved + 100} {
			require.ErrorIs(h, h.b.KickJob(h.ctx(), id), backend.ErrNotFound)
		}
		h.requireState(reserved, backend.Reserved)
		require.Zero(h, h.jobStats(ready).Kicks)
	}},
	{"KickJobWakesAWaitingReserve", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.buryAll(c, id)
		p := h.session().reserveAsync(forever)
		require.NoError(h, h.b.KickJob(h.ctx(), id))
		p.requireJob(id)
	}},
}
