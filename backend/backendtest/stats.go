package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var statsCases = []testCase{
	{"AFreshStoreHasOnlyTheDefaultTubeAndNoJobs", func(h *harness) {
		require.Equal(h, backend.Stats{Tubes: 1}, *h.stats())
		require.Equal(h, []string{backend.DefaultTube}, h.tubes())
		require.Equal(h, backend.TubeStats{Name: backend.DefaultTube}, *h.tubeStats(backend.DefaultTube))
	}},
	{"StatsCountJobsByState", func(h *harness) {
		c := h.session().use("t").watch("t")
		h.jobInState(c, backend.Ready)
		h.jobInState(c, backend.Ready)
		h.jobInState(c, backend.Delayed)
		h.jobInState(c, backend.Buried)
		h.jobInState(c, backend.Reserved)
		c.use(backend.DefaultTube).put(job{pri: 2000})
		want := backend.Stats{UrgentJobs: 2, ReadyJobs: 3, ReservedJobs: 1, DelayedJobs: 1, BuriedJobs: 1, TotalJobs: 6, Tubes: 2}
		require.Equal(h, want, *h.stats())
		tube := h.tubeStats("t")
		require.Equal(h, backend.TubeStats{
			Name: "t", UrgentJobs: 2, ReadyJobs: 2, ReservedJobs: 1, DelayedJobs: 1, BuriedJobs: 1,
			TotalJobs: 5, Using: 0, Watching: 1,
		}, *tube)
	}},
	{"UrgentMeansReadyWithPriorityBelow1024", func(h *harness) {
		c := h.session()
		c.put(job{pri: 1023})
		c.put(job{pri: 1024})
		c.put(job{pri: 0, delay: time.Hour})
		buried := c.put(job{pri: 0})
		h.buryAll(c, buried)
		require.Equal(h, uint64(1), h.stats().UrgentJobs)
		require.Equal(h, uint64(1), h.tubeStats(backend.DefaultTube).UrgentJobs)
		c.reserveNow()
		require.Zero(h, h.stats().UrgentJobs, "a reserved job is not urgent")
	}},
	{"TotalJobsCountsEveryPutButNotRequeues", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		c.put(job{delay: time.Second})
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id}))
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		require.Equal(h, uint64(2), h.stats().TotalJobs)
		require.Equal(h, uint64(2), h.tubeStats(backend.DefaultTube).TotalJobs)
	}},
	{"TubeStatsOfAMissingTubeIsNotFound", func(h *harness) {
		_, err := h.b.TubeStats(h.ctx(), "missing")
		require.ErrorIs(h, err, backend.ErrNotFound)
		h.requireTubeMissing("missing")
	}},
	{"JobStatsDescribeAFreshJob", func(h *harness) {
		c := h.session().use("t")
		id := c.put(job{pri: 12, ttr: 7 * time.Second})
		require.Equal(h, backend.JobStats{ID: id, Tube: "t", State: backend.Ready, Priority: 12, TTR: 7 * time.Second}, *h.jobStats(id))
	}},
	{"JobStatsAgeGrowsFromThePut", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Second})
		h.advance(90 * time.Second)
		c.reserveID(id)
		require.Equal(h, 90*time.Second, h.jobStats(id).Age)
	}},
	{"JobStatsTimeLeftCountsDownWhileDelayedAndReserved", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 10 * time.Second, ttr: 20 * time.Second})
		h.advance(3 * time.Second)
		require.Equal(h, 7*time.Second, h.jobStats(id).TimeLeft)
		h.advance(7 * time.Second)
		require.Zero(h, h.jobStats(id).TimeLeft, "ready")
		c.reserveID(id)
		h.advance(5 * time.Second)
		require.Equal(h, 15*time.Second, h.jobStats(id).TimeLeft)
	}},
	{"JobStatsDelayIsTheLastOneGivenAndSurvivesMaturing", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 2 * time.Second})
		h.advance(2 * time.Second)
		st := h.jobStats(id)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, 2*time.Second, st.Delay)
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id, Delay: 5 * time.Second}))
		require.Equal(h, 5*time.Second, h.jobStats(id).Delay)
		c.reserveID(h.kickOne(id))
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id}))
		require.Zero(h, h.jobStats(id).Delay)
	}},
	{"JobStatsCountEveryTransition", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: 2 * time.Second})
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id}))
		c.reserveID(id)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, id, 0))
		require.NoError(h, h.b.KickJob(h.ctx(), id))
		c.reserveID(id)
		h.advance(2 * time.Second)
		st := h.jobStats(id)
		require.Equal(h, uint32(3), st.Reserves)
		require.Equal(h, uint32(1), st.Releases)
		require.Equal(h, uint32(1), st.Buries)
		require.Equal(h, uint32(1), st.Kicks)
		require.Equal(h, uint32(1), st.Timeouts)
	}},
	{"JobStatsOfAMissingJobIsNotFound", func(h *harness) {
		_, err := h.b.JobStats(h.ctx(), 1)
		require.ErrorIs(h, err, backend.ErrNotFound)
	}},
	{"StatsCountExistingTubes", func(h *harness) {
		c := h.session().use("a").watch("b")
		require.Equal(h, uint64(3), h.stats().Tubes)
		c.end()
		require.Equal(h, uint64(1), h.stats().Tubes)
	}},
}

// kickOne kicks job id and returns it.
func (h *harness) kickOne(id uint64) uint64 {
	h.Helper()
	require.NoError(h, h.b.KickJob(h.ctx(), id))
	return id
}
