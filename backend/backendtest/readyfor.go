package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// requireReadyFor reserves now and requires the store to tell that the job had been ready for
// want: the queueing time beangate_job_ready_wait_seconds reports.
func (c *client) requireReadyFor(id uint64, want time.Duration) {
	c.h.Helper()
	j := c.reserveNow()
	require.Equal(c.h, id, j.ID)
	require.True(c.h, j.HasReadyFor, "the store tells how long the job was ready")
	require.Equal(c.h, want, j.ReadyFor)
}

// Every way a job becomes ready restarts its time ready: since that transition, not since its
// put. Due times (a delay, a TTR) count from the moment they fell due, however late the store
// noticed.
var readyForCases = []testCase{
	{"ReadySincePut", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.advance(2 * time.Second)
		c.requireReadyFor(id, 2*time.Second)
	}},
	{"ReadySinceTheDelayEnded", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 2 * time.Second})
		h.advance(2 * time.Second)
		h.advance(3 * time.Second)
		c.requireReadyFor(id, 3*time.Second)
	}},
	{"ReadySinceTheDelayEndedUnnoticed", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 2 * time.Second})
		h.advance(5 * time.Second) // one jump: the store learns of it at the reserve
		c.requireReadyFor(id, 3*time.Second)
	}},
	{"ReadySinceRelease", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.advance(time.Second)
		c.reserveID(id)
		h.advance(time.Second)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id}))
		h.advance(time.Second)
		c.requireReadyFor(id, time.Second)
	}},
	{"ReadySinceTheReleaseDelayEnded", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id, Delay: 2 * time.Second}))
		h.advance(5 * time.Second)
		c.requireReadyFor(id, 3*time.Second)
	}},
	{"ReadySinceTheTTRRanOut", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: 2 * time.Second})
		c.reserveID(id)
		h.advance(5 * time.Second)
		other := h.session()
		other.requireReadyFor(id, 3*time.Second)
	}},
	{"ReadySinceKickOfBuried", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.buryAll(c, id)
		h.advance(time.Second)
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 10))
		h.advance(2 * time.Second)
		c.requireReadyFor(id, 2*time.Second)
	}},
	{"ReadySinceKickOfDelayed", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Hour})
		h.advance(time.Second)
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 10))
		h.advance(2 * time.Second)
		c.requireReadyFor(id, 2*time.Second)
	}},
	{"ReadySinceKickJob", func(h *harness) {
		c := h.session()
		buried, delayed := c.put(job{}), c.put(job{delay: time.Hour})
		h.buryAll(c, buried)
		h.advance(time.Second)
		require.NoError(h, h.b.KickJob(h.ctx(), buried))
		require.NoError(h, h.b.KickJob(h.ctx(), delayed))
		h.advance(2 * time.Second)
		c.requireReadyFor(buried, 2*time.Second)
		c.requireReadyFor(delayed, 2*time.Second)
	}},
	{"ReadySinceItsSessionEnded", func(h *harness) {
		owner := h.session()
		id := owner.put(job{})
		owner.reserveID(id)
		h.advance(time.Second)
		owner.end()
		h.advance(2 * time.Second)
		h.session().requireReadyFor(id, 2*time.Second)
	}},
	{"ReadySinceTheTTRRanOutBeforeItsSessionEnded", func(h *harness) {
		owner := h.session()
		id := owner.put(job{ttr: 2 * time.Second})
		owner.reserveID(id)
		h.advance(5 * time.Second) // one jump: the store learns of it at the session's end
		owner.end()
		h.advance(time.Second)
		h.session().requireReadyFor(id, 4*time.Second)
	}},
	{"HandedToAWaitingReserveAtOnce", func(h *harness) {
		// The put wakes the waiter, and a session's end hands its job to one: ready for no time.
		owner, worker := h.session(), h.session()
		p := worker.reserveAsync(forever)
		h.advance(time.Second)
		id := owner.put(job{})
		r := p.wait()
		require.NoError(h, r.err)
		require.Equal(h, id, r.job.ID)
		require.True(h, r.job.HasReadyFor)
		require.Zero(h, r.job.ReadyFor)

		owner.reserveID(owner.put(job{}))
		p = worker.reserveAsync(forever)
		h.advance(time.Second)
		owner.end()
		r = p.wait()
		require.NoError(h, r.err)
		require.True(h, r.job.HasReadyFor)
		require.Zero(h, r.job.ReadyFor)
	}},
}
