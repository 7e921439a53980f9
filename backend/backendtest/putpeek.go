package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var putPeekCases = []testCase{
	{"PutReturnsIncreasingIDsAcrossTubes", func(h *harness) {
		a := h.session()
		b := h.session().use("other")
		var last uint64
		for i := range 6 {
			c := a
			if i%2 == 1 {
				c = b
			}
			id := c.put(job{delay: time.Duration(i%3) * time.Second})
			require.Greater(h, id, last)
			last = id
		}
	}},
	{"PutBatchStoresEachJobInOrder", func(h *harness) {
		w := h.session().watch("b").ignore(backend.DefaultTube)
		waiting := w.reserveAsync(10 * time.Second)
		waiting.requireWaiting()
		before := h.session().put(job{})
		ps := []backend.PutParams{
			{Tube: "a", Priority: 3, TTR: time.Second, Body: []byte("one")},
			{Tube: "b", Priority: 2, TTR: time.Second, Body: []byte("two")},
			{Tube: "a", Priority: 1, Delay: 5 * time.Second, TTR: 2 * time.Second, Body: []byte{}},
		}
		res := h.b.PutBatch(h.ctx(), ps)
		require.Len(h, res, len(ps))
		last := before
		for i, r := range res {
			require.NoError(h, r.Err)
			require.Greater(h, r.ID, last, "ids increase in the batch's order")
			last = r.ID
			j, err := h.b.Peek(h.ctx(), r.ID)
			require.NoError(h, err)
			require.Equal(h, ps[i].Tube, j.Tube)
			require.Equal(h, ps[i].Priority, j.Priority)
			require.Equal(h, string(ps[i].Body), string(j.Body))
		}
		h.requireState(res[2].ID, backend.Delayed)
		waiting.requireJob(res[1].ID) // a put of the batch wakes a waiting reserve
		require.Empty(h, h.b.PutBatch(h.ctx(), nil))
	}},
	{"PutStoresTubePriorityAndBody", func(h *harness) {
		c := h.session().use("foo")
		id := c.put(job{pri: 42, body: "hello\r\nworld\x00"})
		j, err := h.b.Peek(h.ctx(), id)
		require.NoError(h, err)
		require.Equal(h, backend.Job{ID: id, Tube: "foo", Priority: 42, Body: []byte("hello\r\nworld\x00")}, *j)
	}},
	{"PutAcceptsAnEmptyBody", func(h *harness) {
		id, err := h.b.Put(h.ctx(), backend.PutParams{Tube: backend.DefaultTube, TTR: time.Second, Body: []byte{}})
		require.NoError(h, err)
		j, err := h.b.Peek(h.ctx(), id)
		require.NoError(h, err)
		require.Empty(h, j.Body)
	}},
	{"PutWithoutDelayIsReadyAndWithDelayIsDelayed", func(h *harness) {
		c := h.session()
		ready := c.put(job{})
		delayed := c.put(job{delay: 5 * time.Second})
		h.requireState(ready, backend.Ready)
		st := h.jobStats(delayed)
		require.Equal(h, backend.Delayed, st.State)
		require.Equal(h, 5*time.Second, st.Delay)
		require.Equal(h, 5*time.Second, st.TimeLeft)
	}},
	{"DelayedJobBecomesReadyWhenItsDelayPasses", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: 5 * time.Second})
		h.advance(4 * time.Second)
		h.requireState(id, backend.Delayed)
		require.Equal(h, time.Second, h.jobStats(id).TimeLeft)
		h.advance(time.Second)
		h.requireState(id, backend.Ready)
		c.reserveID(id)
	}},
	{"PeekFindsAJobInEveryState", func(h *harness) {
		c := h.session()
		other := h.session()
		buried := c.put(job{pri: 0})
		reserved := c.put(job{pri: 1})
		ready := c.put(job{pri: 2})
		delayed := c.put(job{delay: time.Minute})
		c.reserveID(buried)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, buried, 0))
		other.reserveID(reserved)
		for id, want := range map[uint64]backend.State{ready: backend.Ready, delayed: backend.Delayed, buried: backend.Buried, reserved: backend.Reserved} {
			h.requireState(id, want)
			j, err := h.b.Peek(h.ctx(), id)
			require.NoError(h, err)
			require.Equal(h, id, j.ID)
		}
	}},
	{"PeekOfAMissingJobIsNotFound", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		for _, missing := range []uint64{0, id + 1, 1 << 62} {
			_, err := h.b.Peek(h.ctx(), missing)
			require.ErrorIs(h, err, backend.ErrNotFound)
		}
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		_, err := h.b.Peek(h.ctx(), id)
		require.ErrorIs(h, err, backend.ErrNotFound)
	}},
	{"PeekReadyReturnsLowestPriorityThenLowestID", func(h *harness) {
		c := h.session()
		c.put(job{pri: 10})
		want := c.put(job{pri: 3})
		c.put(job{pri: 3})
		c.put(job{pri: 0, delay: time.Second})
		j, err := h.b.PeekState(h.ctx(), backend.DefaultTube, backend.Ready)
		require.NoError(h, err)
		require.Equal(h, want, j.ID)
	}},
	{"PeekReadyWorksOnAPausedTube", func(h *harness) {
		id := h.session().put(job{})
		h.pause(backend.DefaultTube, time.Minute)
		j, err := h.b.PeekState(h.ctx(), backend.DefaultTube, backend.Ready)
		require.NoError(h, err)
		require.Equal(h, id, j.ID)
	}},
	{"PeekDelayedReturnsTheSoonestDueThenLowestID", func(h *harness) {
		c := h.session()
		c.put(job{delay: 9 * time.Second})
		want := c.put(job{pri: 100, delay: 3 * time.Second})
		c.put(job{pri: 0, delay: 3 * time.Second})
		j, err := h.b.PeekState(h.ctx(), backend.DefaultTube, backend.Delayed)
		require.NoError(h, err)
		require.Equal(h, want, j.ID)
	}},
	{"PeekBuriedReturnsTheOldestBuried", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 1})
		b := c.put(job{pri: 0})
		c.reserveID(b)
		c.reserveID(a)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, b, 5))
		require.NoError(h, h.b.Bury(h.ctx(), c.id, a, 0))
		j, err := h.b.PeekState(h.ctx(), backend.DefaultTube, backend.Buried)
		require.NoError(h, err)
		require.Equal(h, b, j.ID, "buried order is the order of burying, not priority")
	}},
	{"PeekStateOfAnEmptyOrMissingTubeIsNotFound", func(h *harness) {
		c := h.session()
		first := c.put(job{})
		id := c.put(job{pri: 1})
		c.reserveID(first)
		for _, s := range []backend.State{backend.Delayed, backend.Buried} {
			_, err := h.b.PeekState(h.ctx(), backend.DefaultTube, s)
			require.ErrorIs(h, err, backend.ErrNotFound, s.String())
		}
		c.reserveID(id)
		_, err := h.b.PeekState(h.ctx(), backend.DefaultTube, backend.Ready)
		require.ErrorIs(h, err, backend.ErrNotFound, "reserved jobs are not ready")
		for _, s := range []backend.State{backend.Ready, backend.Delayed, backend.Buried} {
			_, err := h.b.PeekState(h.ctx(), "missing", s)
			require.ErrorIs(h, err, backend.ErrNotFound, s.String())
		}
		h.requireTubeMissing("missing")
	}},
}
