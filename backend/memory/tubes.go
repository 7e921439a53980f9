package memory

import (
	"container/list"
	"context"
	"slices"
	"time"

	"github.com/beangate/beangate/backend"
)

// tube is a named queue. It exists while anything references it (see unrefLocked).
type tube struct {
	name     string
	orderIdx int // position in Backend.order

	ready    orderedJobs // by (priority, id)
	delayed  orderedJobs // by (due, id)
	buried   orderedJobs // by burial, oldest first
	reserved uint64
	urgent   uint64 // ready jobs with priority < UrgentPriority

	jobs     uint64    // jobs in any state: references
	using    uint64    // sessions using it: references
	watching uint64    // sessions watching it: references
	waiters  list.List // of *waiter, oldest first

	totalJobs    uint64
	cmdDelete    uint64
	cmdPauseTube uint64

	pause      time.Duration // as requested; 0 when not paused
	pauseUntil time.Time
	pauseIdx   int // position in Backend.paused, -1 when not paused

	pol *tubePolicy // the policy governing it; nil when none does
}

func (t *tube) isPaused() bool { return t.pause > 0 }

func byPauseEnd(a, b *tube) bool   { return a.pauseUntil.Before(b.pauseUntil) }
func setPauseIndex(t *tube, i int) { t.pauseIdx = i }

// tubeLocked returns the tube named name, creating it if needed.
func (b *Backend) tubeLocked(name string) *tube {
	if t := b.tubes[name]; t != nil {
		return t
	}
	t := &tube{
		name:     name,
		orderIdx: len(b.order),
		ready:    newOrderedJobs(byPriority),
		delayed:  newOrderedJobs(byDue),
		buried:   newOrderedJobs(byBurial),
		pauseIdx: -1,
	}
	if len(b.pol.list) > 0 {
		t.pol = b.newTubePolicyLocked(name)
	}
	b.tubes[name] = t
	b.order = append(b.order, t)
	return t
}

// unrefLocked deletes t if nothing references it any more; default always stays. Its pause and
// counters go with it.
func (b *Backend) unrefLocked(t *tube) {
	if t.jobs > 0 || t.using > 0 || t.watching > 0 || t.name == backend.DefaultTube {
		return
	}
	if t.pauseIdx >= 0 {
		b.paused.Remove(t.pauseIdx)
	}
	delete(b.tubes, t.name)
	// As beanstalkd's array removal: the last tube moves into the freed slot.
	last := len(b.order) - 1
	moved := b.order[last]
	b.order[t.orderIdx] = moved
	moved.orderIdx = t.orderIdx
	b.order[last] = nil
	b.order = b.order[:last]
}

// withSession runs fn on session id's state under the lock, as every tube-list change does; op
// names the change in errors.
func (b *Backend) withSession(ctx context.Context, op string, id backend.SessionID, fn func(s *session) error) error {
	if _, err := b.begin(ctx, op); err != nil {
		return err
	}
	defer b.end()
	s, err := b.sessionLocked(op, id)
	if err != nil {
		return err
	}
	return fn(s)
}

// UseTube makes tube the session's used tube.
func (b *Backend) UseTube(ctx context.Context, id backend.SessionID, name string) error {
	return b.withSession(ctx, "use", id, func(s *session) error {
		t := b.tubeLocked(name)
		if t == s.using {
			return nil
		}
		old := s.using
		t.using++
		s.using = t
		old.using--
		b.unrefLocked(old)
		return nil
	})
}

// WatchTube adds tube to the session's watch list.
func (b *Backend) WatchTube(ctx context.Context, id backend.SessionID, name string) error {
	return b.withSession(ctx, "watch", id, func(s *session) error {
		t := b.tubeLocked(name)
		if !slices.Contains(s.watching, t) {
			s.watching = append(s.watching, t)
			t.watching++
		}
		return nil
	})
}

// IgnoreTube removes tube from the session's watch list; it never creates the tube.
func (b *Backend) IgnoreTube(ctx context.Context, id backend.SessionID, name string) error {
	return b.withSession(ctx, "ignore", id, func(s *session) error {
		t := b.tubes[name]
		if t == nil {
			return nil
		}
		i := slices.Index(s.watching, t)
		if i < 0 {
			return nil
		}
		s.unwatchAt(i)
		t.watching--
		b.unrefLocked(t)
		return nil
	})
}

// ListTubes names every existing tube, in beanstalkd's order.
func (b *Backend) ListTubes(ctx context.Context) ([]string, error) {
	if _, err := b.begin(ctx, "list-tubes"); err != nil {
		return nil, err
	}
	defer b.end()
	names := make([]string, len(b.order))
	for i, t := range b.order {
		names[i] = t.name
	}
	return names, nil
}

// PauseTube pauses tube for d from now, replacing any pause; d == 0 unpauses at once.
func (b *Backend) PauseTube(ctx context.Context, name string, d time.Duration) error {
	now, err := b.begin(ctx, "pause-tube")
	if err != nil {
		return err
	}
	defer b.end()
	t := b.tubes[name]
	if t == nil {
		return backend.ErrNotFound
	}
	t.cmdPauseTube++
	if d <= 0 {
		b.unpauseLocked(t, now)
		return nil
	}
	t.pause = d
	t.pauseUntil = now.Add(d)
	if t.pauseIdx >= 0 {
		b.paused.Fix(t.pauseIdx)
	} else {
		b.paused.Push(t)
	}
	return nil
}

// unpauseLocked ends t's pause and serves its waiting reserves.
func (b *Backend) unpauseLocked(t *tube, at time.Time) {
	if t.pauseIdx >= 0 {
		b.paused.Remove(t.pauseIdx)
	}
	t.pause = 0
	t.pauseUntil = time.Time{}
	b.serveLocked(t, at)
}
