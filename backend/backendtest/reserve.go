package backendtest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var reserveCases = []testCase{
	{"ReserveTakesLowestPriorityThenLowestID", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 5})
		b := c.put(job{pri: 1})
		d := c.put(job{pri: 5})
		e := c.put(job{pri: 1})
		for _, want := range []uint64{b, e, a, d} {
			c.reserveID(want)
		}
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"ReserveReturnsTheJob", func(h *harness) {
		c := h.session().use("foo").watch("foo")
		id := c.put(job{pri: 7, body: "payload"})
		j := c.reserveNow()
		j.ReadyFor, j.HasReadyFor = 0, false // the ReadyFor cases check it
		require.Equal(h, backend.Job{ID: id, Tube: "foo", Priority: 7, Body: []byte("payload")}, *j)
	}},
	{"ReservedJobCountsAReserveAndStartsItsTTR", func(h *harness) {
		c := h.session()
		id := c.put(job{ttr: 30 * time.Second})
		c.reserveID(id)
		st := h.jobStats(id)
		require.Equal(h, backend.Reserved, st.State)
		require.Equal(h, uint32(1), st.Reserves)
		require.Equal(h, 30*time.Second, st.TimeLeft)
		h.advance(10 * time.Second)
		require.Equal(h, 20*time.Second, h.jobStats(id).TimeLeft)
	}},
	{"ReleasedJobKeepsItsIDOrderWithinItsPriority", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 3})
		b := c.put(job{pri: 3})
		c.reserveID(a)
		later := c.put(job{pri: 3})
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: a, Priority: 3}))
		for _, want := range []uint64{a, b, later} {
			c.reserveID(want)
		}
	}},
	{"MaturedDelayedJobIsOrderedByItsID", func(h *harness) {
		c := h.session()
		delayed := c.put(job{pri: 5, delay: time.Second})
		ready := c.put(job{pri: 5})
		h.advance(time.Second)
		c.reserveID(delayed)
		c.reserveID(ready)
	}},
	{"ReserveChoosesTheBestJobAcrossWatchedTubes", func(h *harness) {
		c := h.session().watch("a").watch("b")
		a5 := c.use("a").put(job{pri: 5})
		b2 := c.use("b").put(job{pri: 2})
		a2 := c.use("a").put(job{pri: 2})
		for _, want := range []uint64{b2, a2, a5} {
			c.reserveID(want)
		}
	}},
	{"ReserveIgnoresUnwatchedTubes", func(h *harness) {
		producer := h.session().use("other")
		producer.put(job{})
		c := h.session()
		c.requireNothing(backend.ErrTimedOut)
		c.watch("other").ignore(backend.DefaultTube)
		c.reserveNow()
	}},
	{"ReserveSkipsPausedTubes", func(h *harness) {
		c := h.session().watch("p")
		c.use("p").put(job{pri: 0})
		want := c.use(backend.DefaultTube).put(job{pri: 9})
		h.pause("p", time.Minute)
		c.reserveID(want)
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"ReserveWithZeroTimeoutAndNothingReadyTimesOut", func(h *harness) {
		c := h.session()
		c.put(job{delay: time.Second})
		c.requireNothing(backend.ErrTimedOut)
	}},
	{"ReserveWaitsForItsTimeout", func(h *harness) {
		c := h.session()
		p := c.reserveAsync(5 * time.Second)
		h.advance(4 * time.Second)
		p.requireWaiting()
		h.advance(time.Second)
		p.requireErr(backend.ErrTimedOut)
	}},
	{"WaitingReserveIsWokenByAPut", func(h *harness) {
		c := h.session()
		p := c.reserveAsync(forever)
		id := h.session().put(job{})
		p.requireJob(id)
		h.requireState(id, backend.Reserved)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id), "the job belongs to the waiter's session")
	}},
	{"WaitingReserveIsWokenByAPutInAnyWatchedTube", func(h *harness) {
		p := h.session().watch("a").watch("b").reserveAsync(forever)
		id := h.session().use("b").put(job{})
		p.requireJob(id)
	}},
	{"WaitingReserveIsNotWokenByAPutInAnUnwatchedTube", func(h *harness) {
		p := h.session().reserveAsync(forever)
		h.session().use("other").put(job{})
		p.requireWaiting()
		id := h.session().put(job{})
		p.requireJob(id)
	}},
	{"WaitingReserveIsWokenByADelayedJobMaturing", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 3 * time.Second})
		p := c.reserveAsync(forever)
		h.advance(2 * time.Second)
		p.requireWaiting()
		h.advance(time.Second)
		p.requireJob(id)
	}},
	{"WaitingReserveGetsADelayedJobPutLaterButDueSooner", func(h *harness) {
		// The waiter knows the hour-long delay; the job due in a second must reach it on time.
		h.session().put(job{delay: time.Hour})
		p := h.session().reserveAsync(forever)
		p.requireWaiting()
		id := h.session().put(job{delay: time.Second})
		h.advance(time.Second)
		p.requireJob(id)
	}},
	{"DelayMaturingBeforeTheTimeoutWinsWhenTheClockJumpsPastBoth", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 3 * time.Second})
		p := c.reserveAsync(5 * time.Second)
		h.advance(10 * time.Second)
		p.requireJob(id)
	}},
	{"ReserveWithNegativeTimeoutWaitsUntilTheContextEnds", func(h *harness) {
		c := h.session()
		ctx, cancel := context.WithCancel(h.ctx())
		p := c.reserveAsyncCtx(ctx, -1)
		h.advance(forever)
		p.requireWaiting()
		cancel()
		p.requireErr(context.Canceled)
		id := h.session().put(job{})
		h.requireState(id, backend.Ready)
		c.reserveID(id)
	}},
	{"ReserveWithAnEndedContextFails", func(h *harness) {
		c := h.session()
		c.put(job{})
		ctx, cancel := context.WithCancel(h.ctx())
		cancel()
		_, err := h.b.Reserve(ctx, c.reserveParams(time.Second))
		require.ErrorIs(h, err, context.Canceled)
	}},
	{"OneJobGoesToExactlyOneOfTwoWaiters", func(h *harness) {
		p1 := h.session().reserveAsync(5 * time.Second)
		p2 := h.session().reserveAsync(5 * time.Second)
		id := h.session().put(job{})
		var got []reserveResult
		select {
		case r := <-p1.done:
			got = append(got, r)
			h.advance(5 * time.Second)
			got = append(got, p2.wait())
		case r := <-p2.done:
			got = append(got, r)
			h.advance(5 * time.Second)
			got = append(got, p1.wait())
		case <-time.After(watchdog):
			h.Fatal("no waiter got the job")
		}
		require.NoError(h, got[0].err)
		require.Equal(h, id, got[0].job.ID)
		require.ErrorIs(h, got[1].err, backend.ErrTimedOut)
	}},
	{"ReserveJobTakesAReadyDelayedOrBuriedJobInAnyTube", func(h *harness) {
		owner := h.session().use("elsewhere")
		c := h.session()
		ready := owner.put(job{})
		delayed := owner.put(job{delay: time.Hour})
		buried := owner.put(job{})
		owner.watch("elsewhere")
		_, err := h.b.ReserveJob(h.ctx(), owner.id, buried)
		require.NoError(h, err)
		require.NoError(h, h.b.Bury(h.ctx(), owner.id, buried, 0))
		h.pause("elsewhere", time.Hour)
		for _, id := range []uint64{ready, delayed, buried} {
			j, err := h.b.ReserveJob(h.ctx(), c.id, id)
			require.NoError(h, err)
			require.Equal(h, id, j.ID)
			require.Equal(h, "elsewhere", j.Tube)
			st := h.jobStats(id)
			require.Equal(h, backend.Reserved, st.State)
			require.Equal(h, 10*time.Second, st.TimeLeft)
		}
		require.Equal(h, uint32(2), h.jobStats(buried).Reserves)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, delayed), "the reserving session owns it")
	}},
	{"ReserveJobOfAReservedOrMissingJobIsNotFound", func(h *harness) {
		c := h.session()
		other := h.session()
		mine := c.put(job{})
		theirs := c.put(job{})
		c.reserveID(mine)
		other.reserveID(theirs)
		for _, id := range []uint64{mine, theirs, theirs + 100, 0} {
			_, err := h.b.ReserveJob(h.ctx(), c.id, id)
			require.ErrorIs(h, err, backend.ErrNotFound)
		}
	}},
	{"ReservedJobReturnsToReadyAfterTTREvenIfItWasDelayed", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Hour, ttr: 2 * time.Second})
		_, err := h.b.ReserveJob(h.ctx(), c.id, id)
		require.NoError(h, err)
		h.advance(2 * time.Second)
		st := h.jobStats(id)
		require.Equal(h, backend.Ready, st.State)
		require.Equal(h, uint32(1), st.Timeouts)
	}},
}
