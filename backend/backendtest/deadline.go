package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var deadlineCases = []testCase{
	{"ReserveInsideTheMarginWithNothingReadyIsDeadlineSoon", func(h *harness) {
		c := h.session()
		c.put(job{ttr: 3 * time.Second})
		c.reserveNow()
		h.advance(2 * time.Second)
		c.requireNothing(backend.ErrDeadlineSoon)
		p := c.reserveAsync(forever)
		p.requireErr(backend.ErrDeadlineSoon)
	}},
	{"ReserveJustBeforeTheMarginTimesOut", func(h *harness) {
		c := h.session()
		c.put(job{ttr: 3 * time.Second})
		c.reserveNow()
		h.advance(2*time.Second - time.Millisecond)
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"TTROfOneSecondIsInsideTheMarginAtOnce", func(h *harness) {
		c := h.session()
		c.put(job{ttr: time.Second})
		c.reserveNow()
		c.requireNothing(backend.ErrDeadlineSoon)
	}},
	{"AReadyJobInAWatchedTubeWinsOverDeadlineSoon", func(h *harness) {
		c := h.session().watch("b")
		c.put(job{ttr: time.Second})
		c.reserveNow()
		id := c.use("b").put(job{})
		c.reserveID(id)
	}},
	{"AReadyJobInAPausedWatchedTubeStillEndsInDeadlineSoon", func(h *harness) {
		c := h.session().watch("p")
		c.put(job{ttr: time.Second})
		c.reserveNow()
		c.use("p").put(job{})
		h.pause("p", time.Hour)
		c.reserveAsync(forever).requireErr(backend.ErrDeadlineSoon)
		c.requireNothing(backend.ErrDeadlineSoon)
	}},
	{"AReadyJobInAnUnwatchedTubeDoesNotPreventDeadlineSoon", func(h *harness) {
		c := h.session()
		c.put(job{ttr: time.Second})
		c.reserveNow()
		h.session().use("other").put(job{})
		c.requireNothing(backend.ErrDeadlineSoon)
	}},
	{"TheMarginBeginningEndsAWaitingReserve", func(h *harness) {
		c := h.session()
		c.put(job{ttr: 3 * time.Second})
		c.reserveNow()
		p := c.reserveAsync(forever)
		h.advance(2*time.Second - time.Millisecond)
		p.requireWaiting()
		h.advance(time.Millisecond)
		p.requireErr(backend.ErrDeadlineSoon)
	}},
	{"DeadlineSoonBeatsTimedOut", func(h *harness) {
		c := h.session()
		c.put(job{ttr: 3 * time.Second})
		c.reserveNow()
		p := c.reserveAsync(2 * time.Second)
		h.advance(2 * time.Second)
		p.requireErr(backend.ErrDeadlineSoon)
	}},
	{"DeadlineSoonLeavesTheJobReserved", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: time.Second})
		c.reserveID(id)
		c.requireNothing(backend.ErrDeadlineSoon)
		st := h.jobStats(id)
		require.Equal(h, backend.Reserved, st.State)
		require.Equal(h, uint32(1), st.Reserves)
		require.NoError(h, h.b.Touch(h.ctx(), c.id, id))
	}},
	{"AnotherSessionsReservationDoesNotCauseDeadlineSoon", func(h *harness) {
		owner := h.session()
		owner.put(job{ttr: time.Second})
		owner.reserveNow()
		h.session().requireNothing(backend.ErrTimedOut)
	}},
	{"ReserveJobIgnoresTheMargin", func(h *harness) {
		c := h.session()
		c.put(job{ttr: time.Second})
		c.reserveNow()
		id := c.put(job{delay: time.Hour})
		_, err := h.b.ReserveJob(h.ctx(), c.id, id)
		require.NoError(h, err)
	}},
	{"TouchMovesTheDeadlineOutOfTheMargin", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: 3 * time.Second})
		c.reserveID(id)
		h.advance(2500 * time.Millisecond)
		c.requireNothing(backend.ErrDeadlineSoon)
		require.NoError(h, h.b.Touch(h.ctx(), c.id, id))
		require.Equal(h, 3*time.Second, h.jobStats(id).TimeLeft)
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"TTRExpiryReturnsTheJobToReadyAndCountsATimeout", func(h *harness) {
		c := h.session()
		id := c.put(job{pri: 77, ttr: 2 * time.Second})
		c.reserveID(id)
		h.advance(2*time.Second - time.Millisecond)
		h.requireState(id, backend.Reserved)
		h.advance(time.Millisecond)
		st := h.jobStats(id)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, uint32(77), st.Priority)
		require.Equal(h, uint32(1), st.Reserves)
		require.Equal(h, uint32(1), st.Timeouts)
		require.Zero(h, st.Releases)
		require.Zero(h, st.TimeLeft)
		require.Equal(h, uint64(1), h.stats().JobTimeouts)
		err := h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id})
		require.ErrorIs(h, err, backend.ErrNotFound, "the former owner no longer holds it")
		c.reserveID(id)
	}},
	{"TTRExpiryHappensWithoutAnyCall", func(h *harness) {
		owner := h.session()
		id := owner.put(job{ttr: 2 * time.Second})
		owner.reserveID(id)
		p := h.session().reserveAsync(forever)
		h.advance(2 * time.Second)
		p.requireJob(id)
		require.Equal(h, uint32(1), h.jobStats(id).Timeouts)
	}},
	{"TTRExpiryCountsEachTimeout", func(h *harness) {
		c := h.session()
		a := c.put(job{ttr: 2 * time.Second})
		b := c.put(job{ttr: 5 * time.Second})
		c.reserveID(a)
		c.reserveID(b)
		h.advance(time.Minute)
		require.Equal(h, uint64(2), h.stats().JobTimeouts)
		require.Zero(h, h.stats().ReservedJobs)
	}},
}
