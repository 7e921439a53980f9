package backendtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var tubeLifecycleCases = []testCase{
	{"TheDefaultTubeAlwaysExists", func(h *harness) {
		c := h.session()
		c.use("x").watch("x").ignore(backend.DefaultTube)
		c.end()
		require.Equal(h, []string{backend.DefaultTube}, h.tubes())
		h.tubeStats(backend.DefaultTube)
		h.pause(backend.DefaultTube, time.Second)
	}},
	{"ATubeVanishesWhenItsLastJobGoes", func(h *harness) {
		c := h.session().use("t")
		id := c.put(job{})
		c.use(backend.DefaultTube)
		require.Contains(h, h.tubes(), "t", "a job keeps its tube")
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		h.requireTubeMissing("t")
	}},
	{"AReservedJobKeepsItsTube", func(h *harness) {
		c := h.session().watch("t").use("t")
		id := c.put(job{})
		c.reserveID(id)
		c.use(backend.DefaultTube).ignore("t")
		h.tubeStats("t")
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		h.requireTubeMissing("t")
	}},
	{"ATubeVanishesWithItsLastUserOrWatcher", func(h *harness) {
		a := h.session().use("t")
		b := h.session().watch("t")
		a.use(backend.DefaultTube)
		h.tubeStats("t")
		b.ignore("t")
		h.requireTubeMissing("t")
	}},
	{"ARecreatedTubeStartsWithFreshCountersAndNoPause", func(h *harness) {
		c := h.session().use("t")
		id := c.put(job{})
		require.NoError(h, h.b.Delete(h.ctx(), c.id, id))
		h.pause("t", time.Hour)
		c.use(backend.DefaultTube)
		h.requireTubeMissing("t")
		c.use("t")
		require.Equal(h, backend.TubeStats{Name: "t", Using: 1}, *h.tubeStats("t"))
	}},
	{"ListTubesNamesEveryExistingTube", func(h *harness) {
		// Order after a removal is beanstalkd's accident (spec §10): only the set is checked.
		c := h.session().watch("a").watch("b").watch("c")
		require.ElementsMatch(h, []string{backend.DefaultTube, "a", "b", "c"}, h.tubes())
		c.ignore("a")
		require.ElementsMatch(h, []string{backend.DefaultTube, "c", "b"}, h.tubes())
		c.use("a")
		require.ElementsMatch(h, []string{backend.DefaultTube, "c", "b", "a"}, h.tubes())
	}},
}
