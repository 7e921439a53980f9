package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// startReserve starts a reserve with StartReserve and gives it a moment to begin waiting. Its
// outcome, returned at once or delivered later, comes on the returned pending; wait is the
// PendingReserve, nil for an outcome returned at once.
func (c *client) startReserve(timeout time.Duration) (p *pending, wait backend.PendingReserve) {
	c.h.Helper()
	p = &pending{h: c.h, done: make(chan reserveResult, 2)} // room for a wrong second delivery
	deliver := func(j *backend.Job, err error) { p.done <- reserveResult{j, err} }
	j, wait, err := c.h.b.StartReserve(c.h.ctx(), c.reserveParams(timeout), deliver)
	if wait == nil {
		p.done <- reserveResult{j, err}
	} else {
		require.NoError(c.h, err)
		require.Nil(c.h, j)
	}
	time.Sleep(settle)
	return p, wait
}

// requireNoMore checks that nothing (more) is delivered, as requireWaiting checks that a
// reserve has not returned.
func (p *pending) requireNoMore() {
	p.h.Helper()
	p.requireWaiting()
}

// StartReserve is Reserve that does not block its caller: an outcome it has at once it returns,
// a wait's it delivers exactly once, and Cancel never loses a job.
var startReserveCases = []testCase{
	{"TimeoutZeroAnswersAtOnce", func(h *harness) {
		c := h.session()
		_, wait, err := h.b.StartReserve(h.ctx(), c.reserveParams(0), func(*backend.Job, error) { h.Error("delivered") })
		require.ErrorIs(h, err, backend.ErrTimedOut)
		require.Nil(h, wait)
		id := c.put(job{})
		j, wait, err := h.b.StartReserve(h.ctx(), c.reserveParams(0), func(*backend.Job, error) { h.Error("delivered") })
		require.NoError(h, err)
		require.Nil(h, wait)
		require.Equal(h, id, j.ID)
	}},
	{"AReadyJobIsReturnedOrDelivered", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		p, _ := c.startReserve(forever)
		p.requireJob(id)
		p.requireNoMore()
		h.requireState(id, backend.Reserved)
	}},
	{"AWaitGetsThePutJobOnce", func(h *harness) {
		worker, producer := h.session(), h.session()
		p, wait := worker.startReserve(forever)
		require.NotNil(h, wait, "nothing is ready: the reserve waits")
		p.requireNoMore()
		id := producer.put(job{})
		p.requireJob(id)
		h.requireState(id, backend.Reserved)
		second := producer.put(job{})
		p.requireNoMore()
		h.requireState(second, backend.Ready)
	}},
	{"ATimeoutIsDelivered", func(h *harness) {
		c := h.session()
		p, wait := c.startReserve(time.Second)
		require.NotNil(h, wait)
		h.advance(time.Second)
		p.requireErr(backend.ErrTimedOut)
		p.requireNoMore()
	}},
	{"CancelBeforeTheOutcomeDeliversNothing", func(h *harness) {
		worker, producer := h.session(), h.session()
		p, wait := worker.startReserve(forever)
		require.True(h, wait.Cancel())
		id := producer.put(job{})
		p.requireNoMore()
		h.requireState(id, backend.Ready)
	}},
	{"CancelRacingAPutLosesNoJob", func(h *harness) {
		worker, producer := h.session(), h.session()
		p, wait := worker.startReserve(forever)
		id := producer.put(job{})
		if wait.Cancel() {
			p.requireNoMore()
			h.requireState(id, backend.Ready)
			return
		}
		p.requireJob(id) // the outcome came first: delivered, and the job is the worker's
		h.requireState(id, backend.Reserved)
	}},
	{"EndingTheSessionEndsTheWait", func(h *harness) {
		c := h.session()
		p, wait := c.startReserve(forever)
		require.NotNil(h, wait)
		c.end()
		r := p.wait()
		require.Error(h, r.err)
		require.Nil(h, r.job)
	}},
}
