package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var pauseCases = []testCase{
	{"APausedTubeIsSkippedUntilThePauseEnds", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.pause(backend.DefaultTube, 10*time.Second)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(10*time.Second - time.Millisecond)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(time.Millisecond)
		c.reserveID(id)
	}},
	{"PauseZeroUnpausesAtOnce", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.pause(backend.DefaultTube, time.Hour)
		h.pause(backend.DefaultTube, 0)
		st := h.tubeStats(backend.DefaultTube)
		require.Zero(h, st.Pause)
		require.Zero(h, st.PauseTimeLeft)
		c.reserveID(id)
	}},
	{"UnpauseWakesAWaitingReserve", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.pause(backend.DefaultTube, time.Hour)
		p := c.reserveAsync(forever)
		p.requireWaiting()
		h.pause(backend.DefaultTube, 0)
		p.requireJob(id)
	}},
	{"PauseExpiryWakesAWaitingReserve", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.pause(backend.DefaultTube, 3*time.Second)
		p := c.reserveAsync(forever)
		h.advance(2 * time.Second)
		p.requireWaiting()
		h.advance(time.Second)
		p.requireJob(id)
	}},
	{"AWaitingReserveTimesOutDuringALongerPause", func(h *harness) {
		c := h.session()
		c.put(job{})
		h.pause(backend.DefaultTube, time.Minute)
		p := c.reserveAsync(time.Second)
		h.advance(time.Second)
		p.requireErr(backend.ErrTimedOut)
	}},
	{"APauseCanBeShortenedOrExtended", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.pause(backend.DefaultTube, time.Hour)
		h.pause(backend.DefaultTube, 2*time.Second)
		st := h.tubeStats(backend.DefaultTube)
		require.Equal(h, 2*time.Second, st.Pause)
		require.Equal(h, 2*time.Second, st.PauseTimeLeft)
		require.Equal(h, uint64(2), st.CmdPauseTube)
		h.advance(time.Second)
		h.pause(backend.DefaultTube, 5*time.Second)
		h.advance(4 * time.Second)
		c.requireNothing(backend.ErrTimedOut)
		h.advance(time.Second)
		c.reserveID(id)
	}},
	{"PauseStatsShowThePauseAndItsTimeLeft", func(h *harness) {
		h.session().use("t")
		h.pause("t", 100*time.Second)
		h.advance(30 * time.Second)
		st := h.tubeStats("t")
		require.Equal(h, 100*time.Second, st.Pause)
		require.Equal(h, 70*time.Second, st.PauseTimeLeft)
		require.Equal(h, uint64(1), st.CmdPauseTube)
		h.advance(70 * time.Second)
		st = h.tubeStats("t")
		require.Zero(h, st.Pause)
		require.Zero(h, st.PauseTimeLeft)
	}},
	{"PausingAMissingTubeIsNotFoundAndDoesNotCreateIt", func(h *harness) {
		require.ErrorIs(h, h.b.PauseTube(h.ctx(), "missing", time.Second), backend.ErrNotFound)
		h.requireTubeMissing("missing")
	}},
	{"DelayedJobsMatureInAPausedTube", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Second})
		h.pause(backend.DefaultTube, time.Hour)
		h.advance(time.Second)
		h.requireState(id, backend.Ready)
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"PutAndReserveJobWorkOnAPausedTube", func(h *harness) {
		c := h.session()
		h.pause(backend.DefaultTube, time.Hour)
		id := c.put(job{})
		_, err := h.b.ReserveJob(h.ctx(), c.id, id)
		require.NoError(h, err)
	}},
}
