package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var sessionCases = []testCase{
	{"NewSessionUsesAndWatchesDefault", func(h *harness) {
		h.session()
		st := h.tubeStats(backend.DefaultTube)
		require.Equal(h, uint64(1), st.Using)
		require.Equal(h, uint64(1), st.Watching)
	}},
	{"UseTubeCreatesTheTubeAndMovesTheReference", func(h *harness) {
		c := h.session().use("foo")
		require.Equal(h, uint64(1), h.tubeStats("foo").Using)
		require.Equal(h, uint64(0), h.tubeStats(backend.DefaultTube).Using)
		c.use("foo")
		require.Equal(h, uint64(1), h.tubeStats("foo").Using, "using the same tube again counts once")
	}},
	{"WatchTubeCreatesTheTubeAndIsIdempotent", func(h *harness) {
		c := h.session().watch("foo")
		c.watch("foo")
		require.Equal(h, uint64(1), h.tubeStats("foo").Watching)
		require.Equal(h, uint64(1), h.tubeStats(backend.DefaultTube).Watching)
	}},
	{"IgnoreTubeDropsTheReference", func(h *harness) {
		c := h.session().watch("foo")
		other := h.session().watch("foo")
		c.ignore("foo")
		require.Equal(h, uint64(1), h.tubeStats("foo").Watching)
		other.ignore("foo")
		h.requireTubeMissing("foo")
	}},
	{"IgnoreOfAnUnwatchedTubeIsANoOpAndDoesNotCreateIt", func(h *harness) {
		c := h.session().watch("foo")
		c.ignore("nope")
		h.requireTubeMissing("nope")
		require.Equal(h, uint64(1), h.tubeStats("foo").Watching)
	}},
	{"EndSessionDropsItsTubeReferences", func(h *harness) {
		c := h.session().use("foo").watch("bar")
		c.end()
		h.requireTubeMissing("foo")
		h.requireTubeMissing("bar")
		st := h.tubeStats(backend.DefaultTube)
		require.Zero(h, st.Using)
		require.Zero(h, st.Watching)
	}},
	{"EndingAnUnknownSessionIsNotAnError", func(h *harness) {
		require.NoError(h, h.b.EndSession(h.ctx(), "nobody.1"))
		c := h.session()
		c.end()
		c.end()
	}},
	{"EndSessionReturnsReservedJobsToReadyWithCountersUnchanged", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 5})
		b := c.put(job{pri: 6})
		c.reserveID(a)
		c.reserveID(b)
		c.end()
		for _, id := range []uint64{a, b} {
			st := h.jobStats(id)
			require.Equal(h, backend.Ready, st.State)
			require.Equal(h, uint32(1), st.Reserves)
			require.Zero(h, st.Timeouts)
			require.Zero(h, st.Releases)
		}
		require.Zero(h, h.stats().JobTimeouts)
		require.Zero(h, h.stats().ReservedJobs)
		h.advance(time.Minute)
		require.Zero(h, h.jobStats(a).Timeouts, "no TTR runs for a returned job")
	}},
	{"EndSessionHandsReturnedJobsToWaitingReserves", func(h *harness) {
		owner := h.session()
		id := owner.put(job{})
		owner.reserveID(id)
		p := h.session().reserveAsync(forever)
		owner.end()
		p.requireJob(id)
	}},
	{"EndSessionHandsReturnedJobsToAWaiterInReservationOrder", func(h *harness) {
		// beanstalkd returns a closing session's jobs one by one in the order they were
		// reserved, each to a waiting reserve if there is one: the one waiter gets the job
		// reserved first, though the later one has a better priority and an earlier deadline
		// (docs/protocol.md §3.7).
		owner := h.session()
		first := owner.put(job{pri: 3, ttr: 100 * time.Second})
		owner.reserveID(first)
		second := owner.put(job{pri: 0, ttr: 10 * time.Second})
		owner.reserveID(second)
		p := h.session().reserveAsync(forever)
		owner.end()
		p.requireJob(first)
		h.requireState(second, backend.Ready)
	}},
	{"EndSessionHandsNoJobOfAPausedTube", func(h *harness) {
		owner := h.session()
		paused := owner.put(job{pri: 0})
		owner.reserveID(paused)
		other := owner.use("other").put(job{pri: 9})
		owner.watch("other").reserveID(other)
		p := h.session().watch("other").reserveAsync(forever)
		h.pause(backend.DefaultTube, time.Hour)
		owner.end()
		p.requireJob(other)
		h.requireState(paused, backend.Ready)
	}},
	{"EndSessionStopsItsWaitingReserve", func(h *harness) {
		c := h.session()
		p := c.reserveAsync(-1)
		c.end()
		r := p.wait()
		require.Error(h, r.err)
		require.Nil(h, r.job)
		id := h.session().put(job{})
		h.requireState(id, backend.Ready)
	}},
}
