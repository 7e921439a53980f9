package backendtest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// readyAges asks the backend about tubes' ready ages.
func (h *harness) readyAges(tubes ...string) map[string]time.Duration {
	h.Helper()
	ages, err := h.b.ReadyAges(h.ctx(), tubes)
	require.NoError(h, err)
	return ages
}

// A tube's ready age is how long the job a reserve would take next has been ready: it grows
// while nothing is reserved, and due times count from when they fell due, however late the
// store notices.
var readyAgesCases = []testCase{
	{"TheNextJobsTimeReadyPerTube", func(h *harness) {
		c := h.session()
		c.put(job{pri: 10})
		h.advance(2 * time.Second)
		c.use("other").put(job{})
		h.advance(time.Second)
		require.Equal(h, map[string]time.Duration{"default": 3 * time.Second, "other": time.Second},
			h.readyAges("default", "other"))
		h.advance(time.Hour)
		require.Equal(h, map[string]time.Duration{"default": time.Hour + 3*time.Second, "other": time.Hour + time.Second},
			h.readyAges("default", "other"), "it grows while no worker takes anything")
	}},
	{"TheJobAReserveTakesNextNotTheOldest", func(h *harness) {
		c := h.session()
		old := c.put(job{pri: 10})
		h.advance(2 * time.Second)
		urgent := c.put(job{pri: 1})
		h.advance(time.Second)
		require.Equal(h, map[string]time.Duration{"default": time.Second}, h.readyAges("default"))
		c.reserveID(urgent)
		require.Equal(h, map[string]time.Duration{"default": 3 * time.Second}, h.readyAges("default"))
		c.reserveID(old)
		require.Empty(h, h.readyAges("default"), "no ready job: left out")
	}},
	{"DueJobsAreReadySinceTheirDueTime", func(h *harness) {
		c := h.session()
		c.put(job{delay: 2 * time.Second})
		c.use("ttr").put(job{ttr: 2 * time.Second})
		c.watch("ttr").ignore(backend.DefaultTube).reserveNow()
		h.advance(5 * time.Second) // one jump: the store learns of it when asked
		require.Equal(h, map[string]time.Duration{"default": 3 * time.Second, "ttr": 3 * time.Second},
			h.readyAges("default", "ttr"))
	}},
	{"ReleaseAndKickRestartTheTimeReady", func(h *harness) {
		c := h.session()
		id := c.put(job{})
		h.advance(5 * time.Second)
		c.reserveID(id)
		require.NoError(h, h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: id}))
		h.advance(time.Second)
		require.Equal(h, map[string]time.Duration{"default": time.Second}, h.readyAges("default"))
		c.reserveID(id)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, id, 0))
		h.advance(time.Second)
		require.Equal(h, uint64(1), h.kick(backend.DefaultTube, 1))
		h.advance(2 * time.Second)
		require.Equal(h, map[string]time.Duration{"default": 2 * time.Second}, h.readyAges("default"))
	}},
	{"ManyTubesInOneCall", func(h *harness) {
		c := h.session()
		var tubes []string
		want := map[string]time.Duration{}
		for i := range 205 { // more than a store may ask about at once
			tube := fmt.Sprintf("t%03d", i)
			c.use(tube).put(job{})
			tubes = append(tubes, tube)
			want[tube] = time.Second
		}
		h.advance(time.Second)
		require.Equal(h, want, h.readyAges(tubes...))
	}},
	{"TubesWithoutReadyJobsAreLeftOut", func(h *harness) {
		c := h.session()
		c.put(job{delay: time.Hour})
		id := c.put(job{})
		c.reserveID(id)
		require.NoError(h, h.b.Bury(h.ctx(), c.id, id, 0))
		h.pause(backend.DefaultTube, time.Hour)
		c.use("paused").put(job{})
		h.pause("paused", time.Hour)
		h.advance(time.Second)
		require.Equal(h, map[string]time.Duration{"paused": time.Second}, h.readyAges("default", "paused", "no-such-tube"),
			"delayed and buried jobs are not ready; a paused tube's are")
		require.Empty(h, h.readyAges())
	}},
}
