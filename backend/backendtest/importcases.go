package backendtest

import (
	"strconv"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// imp imports jobs and requires success.
func (h *harness) imp(jobs ...backend.ImportJob) []backend.Imported {
	h.Helper()
	out, err := h.b.Import(h.ctx(), jobs)
	require.NoError(h, err)
	require.Len(h, out, len(jobs))
	return out
}

// ij is an import of a ready job of the default tube under its own id, keyed by that id.
func ij(id uint64) backend.ImportJob {
	return backend.ImportJob{Key: "src#" + itoa(id), ID: id, Tube: backend.DefaultTube, State: backend.Ready,
		TTR: 10 * time.Second, Body: []byte("body " + itoa(id))}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

var importCases = []testCase{
	{"AnImportedJobKeepsItsIdAndEveryField", func(h *harness) {
		j := ij(42)
		j.Tube, j.Priority, j.TTR, j.Delay, j.Age = "imported", 7, 30*time.Second, 3*time.Second, 90*time.Second
		j.Reserves, j.Timeouts, j.Releases, j.Buries, j.Kicks = 5, 1, 2, 3, 4
		out := h.imp(j)
		require.Equal(h, []backend.Imported{{ID: 42, Outcome: backend.IDKept}}, out)
		require.Equal(h, &backend.JobStats{ID: 42, Tube: "imported", State: backend.Ready, Priority: 7,
			Age: 90 * time.Second, Delay: 3 * time.Second, TTR: 30 * time.Second,
			Reserves: 5, Timeouts: 1, Releases: 2, Buries: 3, Kicks: 4}, h.jobStats(42))
		got, err := h.b.Peek(h.ctx(), 42)
		require.NoError(h, err)
		require.Equal(h, "body 42", string(got.Body))
		require.Contains(h, h.tubes(), "imported")
		st := h.tubeStats("imported")
		require.Equal(h, uint64(1), st.ReadyJobs)
		require.Equal(h, uint64(1), st.UrgentJobs)
		require.Equal(h, uint64(1), st.TotalJobs)
		require.Equal(h, uint64(1), h.stats().TotalJobs)
		h.advance(10 * time.Second)
		require.Equal(h, 100*time.Second, h.jobStats(42).Age)
	}},
	{"TheIdSequenceMovesPastTheHighestImportedId", func(h *harness) {
		c := h.session()
		h.imp(ij(1000), ij(7))
		require.Equal(h, uint64(1001), c.put(job{}))
		h.imp(ij(500))
		require.Equal(h, uint64(1002), c.put(job{}))
	}},
	{"ATakenIdIsReplacedByAFreshOne", func(h *harness) {
		c := h.session()
		taken := c.put(job{body: "mine"})
		out := h.imp(ij(taken))
		require.Equal(h, backend.IDChanged, out[0].Outcome)
		require.Greater(h, out[0].ID, taken)
		mine, err := h.b.Peek(h.ctx(), taken)
		require.NoError(h, err)
		require.Equal(h, "mine", string(mine.Body))
		theirs, err := h.b.Peek(h.ctx(), out[0].ID)
		require.NoError(h, err)
		require.Equal(h, "body "+itoa(taken), string(theirs.Body))
		require.Greater(h, c.put(job{}), out[0].ID)
	}},
	{"AKeyImportedBeforeIsSkippedEvenAfterItsJobIsGone", func(h *harness) {
		c := h.session()
		first := h.imp(ij(5))
		again := ij(5)
		again.Body = []byte("other")
		require.Equal(h, []backend.Imported{{ID: 5, Outcome: backend.AlreadyImported}}, h.imp(again))
		require.Equal(h, uint64(1), h.tubeStats(backend.DefaultTube).ReadyJobs)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, first[0].ID))
		require.Equal(h, []backend.Imported{{ID: 5, Outcome: backend.AlreadyImported}}, h.imp(again))
		_, err := h.b.Peek(h.ctx(), 5)
		require.ErrorIs(h, err, backend.ErrNotFound)
		// Within one call too: the second of two jobs with one key is skipped.
		out := h.imp(ij(9), ij(9))
		require.Equal(h, []backend.Imported{{ID: 9, Outcome: backend.IDKept}, {ID: 9, Outcome: backend.AlreadyImported}}, out)
	}},
	{"ADelayedJobKeepsItsRemainingDelay", func(h *harness) {
		c := h.session()
		j := ij(3)
		j.State, j.Delay, j.TimeLeft = backend.Delayed, time.Minute, 5*time.Second
		h.imp(j)
		st := h.jobStats(3)
		require.Equal(h, backend.Delayed, st.State)
		require.Equal(h, 5*time.Second, st.TimeLeft)
		require.Equal(h, time.Minute, st.Delay)
		require.Equal(h, uint64(1), h.tubeStats(backend.DefaultTube).DelayedJobs)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(5 * time.Second)
		c.reserveID(3)
	}},
	{"ADelayedJobWithNoTimeLeftIsReady", func(h *harness) {
		c := h.session()
		j := ij(3)
		j.State, j.Delay = backend.Delayed, time.Minute
		h.imp(j)
		require.Equal(h, backend.Ready, h.jobStats(3).State)
		c.reserveID(3)
	}},
	{"BuriedJobsKeepTheOrderGiven", func(h *harness) {
		c := h.session()
		c.put(job{}) // a buried job already there stays first
		c.reserveID(1)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, 1, 0))
		a, b := ij(9), ij(4)
		a.State, b.State = backend.Buried, backend.Buried
		h.imp(a, b)
		require.Equal(h, backend.Buried, h.jobStats(9).State)
		require.Equal(h, uint64(3), h.tubeStats(backend.DefaultTube).BuriedJobs)
		top, err := h.b.PeekState(h.ctx(), backend.DefaultTube, backend.Buried)
		require.NoError(h, err)
		require.Equal(h, uint64(1), top.ID)
		require.Equal(h, uint64(2), h.kick(backend.DefaultTube, 2))
		h.requireState(9, backend.Ready)
		h.requireState(4, backend.Buried)
	}},
	{"ReadyJobsAreReservedInPriorityAndIdOrder", func(h *harness) {
		c := h.session()
		a, b, d := ij(7), ij(5), ij(6)
		d.Priority = 1
		h.imp(a, b, d)
		c.reserveID(5)
		c.reserveID(7)
		c.reserveID(6)
	}},
	{"AReservedJobIsImportedReady", func(h *harness) {
		j := ij(8)
		j.State = backend.Reserved
		h.imp(j)
		h.requireState(8, backend.Ready)
	}},
	{"AnImportedReadyJobWakesAWaitingReserve", func(h *harness) {
		c := h.session()
		p := c.reserveAsync(forever)
		p.requireWaiting()
		h.imp(ij(77))
		p.requireJob(77)
	}},
	{"AnImportWithNoIdGetsAFreshOne", func(h *harness) {
		c := h.session()
		j := ij(0)
		j.Key = "src#none"
		out := h.imp(j)
		require.Equal(h, backend.IDChanged, out[0].Outcome)
		require.NotZero(h, out[0].ID)
		require.Greater(h, c.put(job{}), out[0].ID)
	}},
}
