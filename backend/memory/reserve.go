package memory

import (
	"container/list"
	"context"
	"time"

	"github.com/beangate/beangate/backend"
)

// waiter is a Reserve blocked for a job. It is registered on every tube it watches; whoever
// makes a job ready in one of them hands the job over under the lock (serveLocked), so a waiter
// never polls and a job is never given to a waiter that has already gone.
type waiter struct {
	session *session
	regs    []waiterReg
	timeout time.Time // zero: no timeout
	wake    time.Time // next time it must look at the clock: min(timeout, deadline-soon)
	wakeIdx int       // position in Backend.waiters, -1 when it has no wake time
	done    bool
	deliver func(*backend.Job, error) // called with the outcome once the lock is released

	b *Backend // for PendingReserve's Cancel
}

type waiterReg struct {
	tube *tube
	elem *list.Element
}

// delivery is a decided wait's outcome on its way to the waiter, handed over after the
// operation that decided it has released the lock.
type delivery struct {
	deliver func(*backend.Job, error)
	job     *backend.Job
	err     error
}

type reserveResult struct {
	job *backend.Job
	err error
}

func byWake(a, b *waiter) bool        { return a.wake.Before(b.wake) }
func setWaiterIndex(w *waiter, i int) { w.wakeIdx = i }

// Reserve reserves the best ready job over p.Tubes, waiting for one up to p.Timeout.
func (b *Backend) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	result := make(chan reserveResult, 1) // buffered: deliver never blocks
	w, j, err := b.tryReserve(ctx, p, func(j *backend.Job, err error) { result <- reserveResult{j, err} })
	if w == nil {
		return j, err
	}
	select {
	case r := <-result:
		return r.job, r.err
	case <-ctx.Done():
	}
	if w.Cancel() {
		return nil, opErr("reserve", ctx.Err())
	}
	r := <-result // decided first: that decision stands, so no job is left reserved unseen
	return r.job, r.err
}

// StartReserve is Reserve without a blocked goroutine: a waiting reserve is a waiter, whose
// outcome the operation that decides it hands to deliver.
func (b *Backend) StartReserve(ctx context.Context, p backend.ReserveParams, deliver func(*backend.Job, error)) (*backend.Job, backend.PendingReserve, error) {
	w, j, err := b.tryReserve(ctx, p, deliver)
	if w == nil {
		return j, nil, err
	}
	return nil, w, nil
}

// Cancel is PendingReserve's, and what Reserve does when its context ends.
func (w *waiter) Cancel() bool {
	b := w.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.done {
		return false // decided before we took the lock: that decision stands
	}
	b.finishWaiterLocked(w, nil, nil)
	b.armLocked()
	return true
}

// tryReserve answers at once when it can; otherwise it registers and returns a waiter.
func (b *Backend) tryReserve(ctx context.Context, p backend.ReserveParams, deliver func(*backend.Job, error)) (*waiter, *backend.Job, error) {
	now, err := b.begin(ctx, "reserve")
	if err != nil {
		return nil, nil, err
	}
	defer b.end()
	s, err := b.sessionLocked("reserve", p.Session)
	if err != nil {
		return nil, nil, err
	}
	tubes := make([]*tube, 0, len(p.Tubes))
	var best *job
	anyReady := false // in any watched tube, paused or not
	for _, name := range p.Tubes {
		t := b.tubes[name]
		if t == nil {
			continue
		}
		tubes = append(tubes, t)
		j, ok := t.ready.Top()
		if !ok {
			continue
		}
		if t.pol != nil && !t.isPaused() && !b.admitLocked(t, now) {
			continue // as if it had nothing ready
		}
		anyReady = true
		if !t.isPaused() && (best == nil || byPriority(j, best)) {
			best = j
		}
	}
	soon := sessionDeadlineSoon(s, now)
	switch {
	case soon && !anyReady:
		return nil, nil, backend.ErrDeadlineSoon
	case best != nil:
		if best.tube.pol != nil {
			best.tube.admitted(now)
		}
		b.detachLocked(best)
		return nil, b.reserveReadyLocked(best, s, now), nil
	case soon:
		// A ready job in a paused tube lifts the immediate check, but the wait would end
		// with DEADLINE_SOON at once (beanstalkd: at its next timer tick).
		return nil, nil, backend.ErrDeadlineSoon
	case p.Timeout == 0:
		return nil, nil, backend.ErrTimedOut
	}
	w := &waiter{session: s, wakeIdx: -1, deliver: deliver, b: b}
	if p.Timeout > 0 {
		w.timeout = now.Add(p.Timeout)
	}
	for _, t := range tubes {
		w.regs = append(w.regs, waiterReg{tube: t, elem: t.waiters.PushBack(w)})
	}
	if s.waiters == nil {
		s.waiters = make(map[*waiter]struct{}, 1)
	}
	s.waiters[w] = struct{}{}
	b.rekeyWaiterLocked(w)
	return w, nil, nil
}

// sessionDeadlineSoon reports whether one of s's reservations is within the safety margin.
func sessionDeadlineSoon(s *session, now time.Time) bool {
	j, ok := s.reserved.Top()
	return ok && !now.Before(timeAt(j.at).Add(-backend.DeadlineSoonMargin))
}

// serveLocked hands t's best ready jobs to t's waiters, oldest waiter first, while both last.
// Because every tube is served whenever a job becomes ready in it, a waiter's other watched
// tubes hold no reservable job, so t's best is also the best the waiter could get.
func (b *Backend) serveLocked(t *tube, at time.Time) {
	for !t.isPaused() && t.ready.Len() > 0 && t.waiters.Len() > 0 {
		if t.pol != nil {
			if !b.admitLocked(t, at) {
				return
			}
			t.admitted(at)
		}
		w := t.waiters.Front().Value.(*waiter)
		j := t.ready.Pop()
		if j.priority < backend.UrgentPriority {
			t.urgent--
		}
		j.state = 0
		b.finishWaiterLocked(w, b.reserveReadyLocked(j, w.session, at), nil)
	}
}

// finishWaiterLocked ends w's wait with the given outcome, which unlock delivers (nothing is
// delivered when both are nil: the caller gave up).
func (b *Backend) finishWaiterLocked(w *waiter, j *backend.Job, err error) {
	if w.done {
		return
	}
	w.done = true
	for _, r := range w.regs {
		r.tube.waiters.Remove(r.elem)
	}
	w.regs = nil
	if w.wakeIdx >= 0 {
		b.waiters.Remove(w.wakeIdx)
	}
	delete(w.session.waiters, w)
	if j != nil || err != nil {
		b.deliveries = append(b.deliveries, delivery{w.deliver, j, err})
	}
}

// rekeyWaiterLocked recomputes when w must next look at the clock: its timeout, or the moment
// its session's earliest reservation enters the safety margin.
func (b *Backend) rekeyWaiterLocked(w *waiter) {
	wake := w.timeout
	if j, ok := w.session.reserved.Top(); ok {
		soon := timeAt(j.at).Add(-backend.DeadlineSoonMargin)
		if wake.IsZero() || soon.Before(wake) {
			wake = soon
		}
	}
	w.wake = wake
	switch {
	case wake.IsZero() && w.wakeIdx >= 0:
		b.waiters.Remove(w.wakeIdx)
	case wake.IsZero():
	case w.wakeIdx >= 0:
		b.waiters.Fix(w.wakeIdx)
	default:
		b.waiters.Push(w)
	}
}

// rekeySessionWaitersLocked follows a change in s's reservations.
func (b *Backend) rekeySessionWaitersLocked(s *session) {
	for w := range s.waiters {
		b.rekeyWaiterLocked(w)
	}
}

// wakeWaiterLocked handles w's wake time at: DEADLINE_SOON beats TIMED_OUT.
func (b *Backend) wakeWaiterLocked(w *waiter, at time.Time) {
	switch {
	case sessionDeadlineSoon(w.session, at):
		b.finishWaiterLocked(w, nil, backend.ErrDeadlineSoon)
	case !w.timeout.IsZero() && !at.Before(w.timeout):
		b.finishWaiterLocked(w, nil, backend.ErrTimedOut)
	default:
		b.rekeyWaiterLocked(w)
	}
}
