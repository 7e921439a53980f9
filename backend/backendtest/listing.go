package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

func (h *harness) listPage(tube string, state backend.State, after string, limit int) *backend.JobPage {
	h.Helper()
	p, err := h.b.ListJobs(h.ctx(), backend.ListParams{Tube: tube, State: state, After: after, Limit: limit, BodyBytes: 64})
	require.NoError(h, err)
	return p
}

// listIDs pages through every job of tube in state, limit per page, and returns their ids in
// the order listed.
func (h *harness) listIDs(tube string, state backend.State, limit int) []uint64 {
	h.Helper()
	var ids []uint64
	after := ""
	for range 1000 {
		p := h.listPage(tube, state, after, limit)
		require.LessOrEqual(h, len(p.Jobs), limit)
		for _, j := range p.Jobs {
			require.Equal(h, state, j.State, "job %d listed as %v", j.ID, state)
			require.Equal(h, tube, j.Tube)
			ids = append(ids, j.ID)
		}
		if p.Next == "" {
			return ids
		}
		after = p.Next
	}
	h.Fatalf("listing %s %v never ended", tube, state)
	return nil
}

var listingCases = []testCase{
	{"ReadyJobsAreListedByPriorityThenIDAcrossPages", func(h *harness) {
		c := h.session()
		a := c.put(job{pri: 5})
		b := c.put(job{pri: 1})
		d := c.put(job{pri: 5})
		e := c.put(job{pri: 0})
		f := c.put(job{pri: 1})
		g := c.put(job{pri: 4294967295})
		c.put(job{delay: time.Hour}) // other states stay out
		want := []uint64{e, b, f, a, d, g}
		for _, limit := range []int{1, 2, 4, 6, 100} {
			require.Equal(h, want, h.listIDs(backend.DefaultTube, backend.Ready, limit), "limit %d", limit)
		}
	}},
	{"DelayedJobsAreListedByDueTimeThenID", func(h *harness) {
		c := h.session()
		late := c.put(job{delay: 9 * time.Second})
		soon := c.put(job{delay: 2 * time.Second})
		mid1 := c.put(job{delay: 5 * time.Second})
		mid2 := c.put(job{delay: 5 * time.Second})
		c.put(job{})
		require.Equal(h, []uint64{soon, mid1, mid2, late}, h.listIDs(backend.DefaultTube, backend.Delayed, 3))
	}},
	{"BuriedJobsAreListedOldestFirst", func(h *harness) {
		c := h.session()
		a, b, d, e := c.put(job{}), c.put(job{}), c.put(job{}), c.put(job{})
		h.buryAll(c, d, a, e, b)
		require.Equal(h, []uint64{d, a, e, b}, h.listIDs(backend.DefaultTube, backend.Buried, 3))
	}},
	{"ReservedJobsAreListedByDeadline", func(h *harness) {
		c := h.session()
		long := c.put(job{ttr: 60 * time.Second})
		short := c.put(job{ttr: 5 * time.Second})
		mid := c.put(job{ttr: 30 * time.Second})
		c.reserveID(long)
		c.reserveID(short)
		c.reserveID(mid)
		require.Equal(h, []uint64{short, mid, long}, h.listIDs(backend.DefaultTube, backend.Reserved, 2))
	}},
	{"AListedJobCarriesItsStatsAndTheStartOfItsBody", func(h *harness) {
		c := h.session().use("lst")
		long := make([]byte, 100)
		for i := range long {
			long[i] = byte('a' + i%26)
		}
		id := c.put(job{pri: 7, delay: 3 * time.Second, ttr: 20 * time.Second, body: string(long)})
		h.advance(time.Second)
		p := h.listPage("lst", backend.Delayed, "", 10)
		require.Len(h, p.Jobs, 1)
		require.Empty(h, p.Next)
		j := p.Jobs[0]
		j.File = 0
		require.Equal(h, *h.jobStats(id), j.JobStats)
		require.Equal(h, 2*time.Second, j.TimeLeft)
		require.Equal(h, uint32(7), j.Priority)
		require.Equal(h, 100, j.BodySize)
		require.Equal(h, long[:64], j.Body)
	}},
	{"APageFollowsItsCursorEvenWhenTheCursorsJobHasGone", func(h *harness) {
		c := h.session()
		var ids []uint64
		for range 6 {
			ids = append(ids, c.put(job{pri: 3}))
		}
		first := h.listPage(backend.DefaultTube, backend.Ready, "", 2)
		require.Equal(h, ids[0], first.Jobs[0].ID)
		require.NotEmpty(h, first.Next)
		require.NoError(h, h.b.Delete(h.ctx(), c.id, ids[1])) // the cursor's own job
		second := h.listPage(backend.DefaultTube, backend.Ready, first.Next, 2)
		require.Equal(h, []uint64{ids[2], ids[3]}, []uint64{second.Jobs[0].ID, second.Jobs[1].ID})

		h.buryAll(c, ids[2], ids[3], ids[4], ids[5])
		first = h.listPage(backend.DefaultTube, backend.Buried, "", 2)
		require.Len(h, first.Jobs, 2)
		h.kickOne(ids[3]) // the buried cursor's job leaves
		rest := h.listPage(backend.DefaultTube, backend.Buried, first.Next, 10)
		require.Len(h, rest.Jobs, 2)
		require.Equal(h, []uint64{ids[4], ids[5]}, []uint64{rest.Jobs[0].ID, rest.Jobs[1].ID})
		require.Empty(h, rest.Next)
	}},
	{"ADueDelayedJobIsListedAsReady", func(h *harness) {
		c := h.session()
		id := c.put(job{delay: time.Second})
		h.advance(2 * time.Second)
		require.Equal(h, []uint64{id}, h.listIDs(backend.DefaultTube, backend.Ready, 10))
		require.Empty(h, h.listIDs(backend.DefaultTube, backend.Delayed, 10))
	}},
	{"AMissingTubeIsNotFoundAndABadCursorIsRefused", func(h *harness) {
		c := h.session()
		c.put(job{})
		_, err := h.b.ListJobs(h.ctx(), backend.ListParams{Tube: "nope", State: backend.Ready, Limit: 10})
		require.ErrorIs(h, err, backend.ErrNotFound)
		for _, bad := range []string{"garbage", "x:y:z"} {
			_, err = h.b.ListJobs(h.ctx(), backend.ListParams{Tube: backend.DefaultTube, State: backend.Ready, After: bad, Limit: 10})
			require.ErrorIs(h, err, backend.ErrBadCursor, "cursor %q", bad)
		}
		require.Empty(h, h.listIDs(backend.DefaultTube, backend.Buried, 10))
	}},
}
