package backendtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// Restart closes a case's backend and returns one reopened on the same durable state, as a
// server restarted on the same store would be (the memory backend on its binlog directory).
// Sessions do not outlive it.
type Restart func(t *testing.T, b backend.Backend, clock *clocktest.Fake) backend.Backend

// RunRestarts runs the cases that restart the backend mid-case, for backends whose state
// outlives the process. They hold beanstalkd's rules for a restart on its binlog.
func RunRestarts(t *testing.T, newBackend NewBackend, restart Restart) {
	for _, c := range append(append(restartCases[:len(restartCases):len(restartCases)], policyRestartCases...), scheduleRestartCases...) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, newBackend, false)
			h.restartWith = restart
			c.run(h)
		})
	}
}

// restart stops the case's backend and goes on with the reopened one.
func (h *harness) restart() {
	h.Helper()
	require.NotNil(h, h.restartWith, "the case needs RunRestarts")
	h.b = h.restartWith(h.T, h.b, h.clock)
}

// durable is what a restart keeps of a job: all but the reserve count (beanstalkd writes no
// record for a reserve) and the time figures, checked separately.
func (h *harness) durable(id uint64) backend.JobStats {
	h.Helper()
	st := *h.jobStats(id)
	st.Reserves, st.Age, st.TimeLeft = 0, 0, 0
	return st
}

var restartCases = []testCase{
	{"JobsInEveryStateSurviveWithTheirFigures", func(h *harness) {
		c := h.session().use("work")
		c.watch("work").ignore(backend.DefaultTube)
		ready := c.put(job{pri: 50, body: "ready\r\n\x00"})
		delayed := c.put(job{pri: 6, delay: 30 * time.Second, ttr: 7 * time.Second})
		buried := c.put(job{pri: 7})
		released := c.put(job{pri: 8})
		kicked := c.put(job{pri: 9})
		held := c.put(job{pri: 10, ttr: time.Minute}) // still reserved at the stop
		// By priority: buried, released, kicked, held; not ready (50).
		for range 4 {
			c.reserveNow()
		}
		require.NoError(h, h.b.Bury(h.ctx(), c.id, buried, 70))
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: released, Priority: 80}))
		require.NoError(h, h.b.Bury(h.ctx(), c.id, kicked, 90))
		require.NoError(h, h.b.KickJob(h.ctx(), kicked))
		h.advance(10 * time.Second)
		want := map[uint64]backend.JobStats{}
		for _, id := range []uint64{ready, delayed, buried, released, kicked, held} {
			want[id] = h.durable(id)
		}
		h.restart()
		for id, w := range want {
			if id == held { // a job reserved at the stop is ready again, as beanstalkd does
				w.State = backend.Ready
			}
			require.Equal(h, w, h.durable(id), "job %d", id)
		}
		require.Equal(h, 20*time.Second, h.jobStats(delayed).TimeLeft, "the delay goes on")
		j, err := h.b.Peek(h.ctx(), ready)
		require.NoError(h, err)
		require.Equal(h, "ready\r\n\x00", string(j.Body))
		// Ready in priority order: the released job's new priority (80) was kept.
		c = h.session().watch("work").ignore(backend.DefaultTube)
		for _, id := range []uint64{held, ready, released, kicked} {
			c.reserveID(id)
		}
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"DeletedJobsStayDeletedAndIDsGoOn", func(h *harness) {
		c := h.session()
		kept := c.put(job{})
		gone := c.put(job{})
		require.NoError(h, h.b.Delete(h.ctx(), c.id, gone))
		h.restart()
		_, err := h.b.Peek(h.ctx(), gone)
		require.ErrorIs(h, err, backend.ErrNotFound)
		h.requireState(kept, backend.Ready)
		require.Greater(h, h.session().put(job{}), gone, "no id is handed out twice")
	}},
	{"PausesAreNotKept", func(h *harness) {
		// beanstalkd writes only jobs to its binlog: a paused tube comes back unpaused.
		c := h.session().use("paused")
		id := c.put(job{})
		h.pause("paused", time.Hour)
		h.restart()
		require.Zero(h, h.tubeStats("paused").Pause)
		h.session().watch("paused").ignore(backend.DefaultTube).reserveID(id)
	}},
	{"TubesWithoutJobsAreGone", func(h *harness) {
		c := h.session().use("empty")
		c.watch("watched")
		h.restart()
		h.requireTubeMissing("empty")
		h.requireTubeMissing("watched")
		require.Equal(h, []string{backend.DefaultTube}, h.tubes())
	}},
}
