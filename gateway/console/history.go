package console

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

const (
	// historyLength is the charts' span: an hour of one-second samples.
	historyLength = 3600
	// maxChartedTubes caps the tubes with a history (about 43 KB each).
	maxChartedTubes = 100
	// maxOverviewTubes caps the tubes sampled each second for the overview (first by name).
	maxOverviewTubes = 1000
)

// point is one second of a tube: its ready jobs, and its puts and deletes in that second.
type point struct{ ready, puts, deletes uint32 }

// ring is a tube's last historyLength points.
type ring struct {
	points [historyLength]point
	next   int // where the next point goes
	n      int // how many are held
}

func (r *ring) add(p point) {
	r.points[r.next] = p
	r.next = (r.next + 1) % historyLength
	r.n = min(r.n+1, historyLength)
}

// history is the sampler's state: the last overview and each charted tube's ring.
type history struct {
	mu       sync.Mutex
	overview *Overview
	totals   map[string][2]uint64 // tube → (total jobs, cmd-delete) at the last sample
	last     time.Time
	rings    map[string]*ring
	maxRings int
}

func newHistory(_ int, maxRings int) *history {
	return &history{totals: map[string][2]uint64{}, rings: map[string]*ring{}, maxRings: maxRings}
}

// sample reads every tube (up to maxOverviewTubes, first by name) and records the second.
func (c *Console) sample(ctx context.Context) {
	b := c.backend()
	if b == nil {
		return
	}
	ov, err := c.readOverview(ctx, b, c.waiting)
	if err != nil {
		c.opts.Log.Warn("console: sampling the tubes failed", "err", err)
		return
	}
	c.history.record(ov)
}

// readOverview reads b's figures; waiting gives current-waiting of a tube among the connections
// of b's tenant.
func (c *Console) readOverview(ctx context.Context, b backend.Backend, waiting func(tube string) int64) (*Overview, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	st, err := b.Stats(ctx)
	if err != nil {
		return nil, err
	}
	names, err := b.ListTubes(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	ov := &Overview{At: time.Now(), Ready: st.ReadyJobs, Reserved: st.ReservedJobs, Delayed: st.DelayedJobs,
		Buried: st.BuriedJobs, Total: st.TotalJobs, Truncated: len(names) > maxOverviewTubes}
	for _, name := range names[:min(len(names), maxOverviewTubes)] {
		ts, err := b.TubeStats(ctx, name)
		if err != nil {
			continue // gone since ListTubes
		}
		t := tubeOf(ts)
		t.Waiting = waiting(name)
		ov.Tubes = append(ov.Tubes, t)
	}
	return ov, nil
}

// record turns totals into rates against the previous sample, keeps ov as the overview and
// adds a point to each charted tube.
func (h *history) record(ov *Overview) {
	h.mu.Lock()
	defer h.mu.Unlock()
	elapsed := ov.At.Sub(h.last).Seconds()
	totals := make(map[string][2]uint64, len(ov.Tubes))
	for i := range ov.Tubes {
		t := &ov.Tubes[i]
		totals[t.Name] = [2]uint64{t.Total, t.Deletes}
		prev, seen := h.totals[t.Name]
		var puts, deletes uint64
		if seen {
			puts, deletes = delta(t.Total, prev[0]), delta(t.Deletes, prev[1])
			if elapsed > 0 {
				t.PutsPerSec, t.DeletesPerSec = float64(puts)/elapsed, float64(deletes)/elapsed
			}
		}
		r := h.rings[t.Name]
		if r == nil && len(h.rings) < h.maxRings {
			r = &ring{}
			h.rings[t.Name] = r
		}
		if r != nil {
			r.add(point{ready: clamp32(t.Ready), puts: clamp32(puts), deletes: clamp32(deletes)})
		}
	}
	for name := range h.rings {
		if _, ok := totals[name]; !ok {
			delete(h.rings, name) // the tube is gone: its chart goes with it
		}
	}
	h.totals, h.last, h.overview = totals, ov.At, ov
}

// delta is a counter's increase; a tube dropped and created again starts from zero.
func delta(now, before uint64) uint64 {
	if now < before {
		return now
	}
	return now - before
}

func clamp32(v uint64) uint32 { return uint32(min(v, 1<<32-1)) }

func (h *history) latest() *Overview {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.overview
}

// of returns tube's points, oldest first.
func (h *history) of(tube string) (*History, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rings[tube]
	if r == nil {
		return nil, false
	}
	out := &History{Tube: tube, End: h.last, Ready: make([]uint32, 0, r.n), Puts: make([]uint32, 0, r.n), Deletes: make([]uint32, 0, r.n)}
	for i := range r.n {
		p := r.points[(r.next-r.n+i+historyLength)%historyLength]
		out.Ready = append(out.Ready, p.ready)
		out.Puts = append(out.Puts, p.puts)
		out.Deletes = append(out.Deletes, p.deletes)
	}
	return out, true
}
