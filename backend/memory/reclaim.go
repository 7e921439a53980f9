package memory

import "sync"

// After a burst of jobs has been consumed, the heap is mostly dead job bodies, and the
// collector, paced by the heap's size at its last cycle, leaves them alone until allocation
// doubles that size again — which a quiet queue may never do. The process keeps its peak RSS,
// and such a server showed millisecond stalls in about 1 % of reserve wake-ups that a fresh one
// did not. A plain collection is not enough: the runtime then hands the freed memory back in
// small steps over the next ~15 s (RSS 290 → 60 MiB in 40 MiB steps, 0.4 s of CPU), and the
// stalls last as long. So when the bytes held fall to a quarter of their peak since the last
// such collection, debug.FreeOSMemory runs in the background: one collection and the memory
// returned at once (~0.1 s of CPU for 250 MiB).
const (
	reclaimMinPeak  = 32 << 20 // peak bytes held below which the runtime's own pacing is fine
	reclaimFraction = 4        // collect when what is held falls to 1/reclaimFraction of the peak
	jobOverhead     = 160      // bytes a job holds besides its body: its record, table slot, tree slot
)

// reclaimer tracks the bytes the backend's jobs hold. Its fields are guarded by Backend.mu,
// which the collecting goroutine takes through lock.
type reclaimer struct {
	held, peak int64
	running    bool   // a collection is under way
	again      bool   // the queue drained further while it ran: collect once more after it
	collect    func() // debug.FreeOSMemory; tests count the calls
	lock       sync.Locker
}

func (r *reclaimer) added(bodySize int) {
	r.held += int64(bodySize + jobOverhead)
	r.peak = max(r.peak, r.held)
}

func (r *reclaimer) removed(bodySize int) {
	r.held -= int64(bodySize + jobOverhead)
	if r.peak < reclaimMinPeak || r.held > r.peak/reclaimFraction {
		return
	}
	r.peak = r.held
	if r.running {
		r.again = true
		return
	}
	r.running = true
	go r.run()
}

// run collects until no further drain has asked for another collection.
func (r *reclaimer) run() {
	for again := true; again; {
		r.collect()
		r.lock.Lock()
		again, r.again = r.again, false
		r.running = again
		r.lock.Unlock()
	}
}
