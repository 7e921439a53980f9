package memory

import (
	"time"

	"github.com/beangate/beangate/backend"
)

// eventKind names the sources of timed events. At equal times the lower kind goes first, so
// that work becoming available (a delay maturing, a TTR running out, a pause ending) is handed
// to a waiting reserve before that reserve's own timeout is looked at.
type eventKind int

const (
	noEvent eventKind = iota
	delayMatures
	ttrExpires
	pauseEnds
	policyDue // an expiry, or a rate's token for waiting reserves
	waiterWakes
)

// nextEventLocked returns the earliest pending event. (No closure here: this runs inside every
// operation, and a small frame keeps a connection's goroutine within its starting stack.)
func (b *Backend) nextEventLocked() (kind eventKind, at time.Time) {
	if len(b.delayed.items) > 0 {
		kind, at = delayMatures, timeAt(b.delayed.items[0].at)
	}
	if len(b.deadlines.items) > 0 {
		if t := timeAt(b.deadlines.items[0].at); kind == noEvent || t.Before(at) {
			kind, at = ttrExpires, t
		}
	}
	if len(b.paused.items) > 0 {
		if t := b.paused.items[0].pauseUntil; kind == noEvent || t.Before(at) {
			kind, at = pauseEnds, t
		}
	}
	if len(b.pol.expiring.items) > 0 || len(b.pol.rateWaits) > 0 {
		if ns, _ := b.policyDueLocked(); kind == noEvent || ns < nanos(at) {
			kind, at = policyDue, timeAt(ns)
		}
	}
	if len(b.waiters.items) > 0 {
		if t := b.waiters.items[0].wake; kind == noEvent || t.Before(at) {
			kind, at = waiterWakes, t
		}
	}
	return kind, at
}

// applyDueLocked applies, in time order, every event due at or before now, each at its own
// time, so that the outcome does not depend on when the timer goroutine got to run.
func (b *Backend) applyDueLocked(now time.Time) {
	for {
		kind, at := b.nextEventLocked()
		if kind == noEvent || at.After(now) {
			return
		}
		switch kind {
		case delayMatures:
			j, _ := b.delayed.Top()
			b.detachLocked(j)
			b.readyLocked(j, at)
		case ttrExpires:
			j, _ := b.deadlines.Top()
			b.recordLocked(j, at, backend.EventTimedOut, j.owner, 0, "")
			b.detachLocked(j)
			j.timeouts++
			b.jobTimeouts++
			if t := j.tube; t.pol != nil {
				if placed, _ := b.comeBackLocked(j, at, 0, false); !placed {
					b.readyLocked(j, at)
				}
				b.slotFreedLocked(t, at)
				continue
			}
			b.readyLocked(j, at)
		case pauseEnds:
			t, _ := b.paused.Top()
			b.unpauseLocked(t, at)
		case policyDue:
			b.applyPolicyDueLocked(at)
		case waiterWakes:
			w, _ := b.waiters.Top()
			b.wakeWaiterLocked(w, at)
		}
	}
}

// armLocked keeps the event timer set for the earliest pending event. A timer set for an
// earlier time than needed is left alone: it fires, finds nothing due, and re-arms.
func (b *Backend) armLocked() {
	kind, at := b.nextEventLocked()
	if kind == noEvent || b.closed {
		return
	}
	if b.timer != nil && !b.timerAt.After(at) {
		return
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.timerGen++
	gen := b.timerGen
	b.timerAt = at
	// For the time itself, not at − Now(): a fake clock advanced in between would set it a
	// whole step late (backend.AfterFuncAt).
	b.timer = backend.AfterFuncAt(b.clock, at, func() { b.onTimer(gen) })
}

func (b *Backend) onTimer(gen uint64) {
	b.mu.Lock()
	if b.closed {
		b.unlock()
		return
	}
	if gen == b.timerGen {
		b.timer = nil
	}
	b.applyDueLocked(b.clock.Now())
	b.end() // commits what a policy acting on a due event wrote
}
