package redis

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
)

// safetyPoll bounds how long a waiting reserve trusts that it would have been told of a new
// job: a publish can be lost (pub/sub reconnecting), so a waiter re-checks at least this often.
const safetyPoll = time.Second

// errSessionEnded answers a reserve whose session was ended while it waited.
var errSessionEnded = errors.New("session ended")

// reserveOutcome is the decoded reply of reserve.lua.
type reserveOutcome struct {
	job    *backend.Job
	more   bool // a watched tube still has a ready job
	soon   bool
	next   int64     // ms when the answer may change by itself; -1: only a publish can change it
	soonAt int64     // ms when the session's DEADLINE_SOON margin starts; -1: none
	now    int64     // the script's now, µs
	sent   time.Time // when the script was sent: it ran after this, here
}

// Reserve reserves the best ready job of p.Tubes for p.Session, waiting as the contract says:
// it re-runs the reserve script whenever it is woken (a watched tube was published, the next
// due time the script reported arrived, or another waiter passed a wake-up on: see waiters) or
// the safety poll ticks.
func (b *Backend) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	w := b.waiters.add(p.Session, p.Tubes) // before the first try, so no publish after it is missed
	defer b.waiters.remove(w)

	start := b.localNow()
	var (
		timeout <-chan struct{}
		soon    ownTimer // its session's DEADLINE_SOON; its tubes' due times are waiters'
		safety  *time.Ticker
		final   bool
		counted bool // the last try counted this reserve as waiting (see notify in lib.lua)
	)
	defer func() {
		soon.stop()
		if safety != nil {
			safety.Stop()
		}
	}()
	for {
		if w.ended.Load() {
			return nil, opErr(string(opReserve), errSessionEnded)
		}
		if done := b.waiters.handingOut(); done != nil {
			select { // the publish that woke us may be of a job a session end hands to someone
			case <-done:
			case <-ctx.Done():
				return nil, opErr(string(opReserve), ctx.Err())
			}
		}
		if id, ok := w.takeHanded(); ok {
			job, err := b.reserveHanded(ctx, p, id)
			if err != nil || job != nil {
				return job, err
			}
		}
		willWait := p.Timeout != 0 && !final
		out, err := b.tryReserve(ctx, p, counted, willWait)
		counted = err == nil && willWait && out.job == nil && !out.soon
		if err == nil && out.more {
			// Jobs remain: a publish woke only one waiter per gateway, so pass it on.
			b.waiters.wakeOne(p.Tubes, w)
		}
		if err == nil && (out.job != nil || counted) && w.ended.Load() {
			// EndSession ran while this try was in flight. If the try ran after the end, it took
			// a job the end did not return, or counted itself as waiting, which brings back a
			// session the store does not know (wait, in lib.lua: a live session forgotten in a
			// loss of data must come back). End it again, so that nothing of it stays behind.
			return nil, opErr(string(opReserve), errors.Join(errSessionEnded, b.EndSession(context.WithoutCancel(ctx), p.Session)))
		}
		switch {
		case err == nil && out.job != nil:
			return out.job, nil // even if ctx just ended: the job is reserved, do not lose it
		case ctx.Err() != nil:
			return nil, opErr(string(opReserve), ctx.Err())
		case err != nil:
			return nil, err
		case out.soon:
			return nil, backend.ErrDeadlineSoon
		case p.Timeout == 0 || final:
			return nil, backend.ErrTimedOut
		}
		if p.Timeout > 0 && timeout == nil {
			end := start.Add(p.Timeout)
			if !b.localNow().Before(end) {
				final = true
				continue
			}
			var stop func()
			timeout, stop = b.afterAt(end)
			defer stop()
		}
		if safety == nil {
			safety = time.NewTicker(b.safetyPoll)
		}
		b.waiters.arm(w, out.next, b.dueTime(out.next, out), b.clock())
		soon.arm(b, out.soonAt, out)
		select {
		case <-ctx.Done():
			return nil, opErr(string(opReserve), ctx.Err())
		case <-b.stop:
			return nil, opErr(string(opReserve), errClosed)
		case <-w.ch: // a publish, a due time, or a wake-up passed on
		case <-soon.ch:
			soon.fired()
		case <-timeout:
			final = true // one last look: DEADLINE_SOON or a job due right now beats TIMED_OUT
		case <-safety.C:
		}
	}
}

// tryReserve runs the reserve script once. uncount: the previous try counted this reserve as
// waiting; count: count it as waiting if nothing is found (it will wait).
func (b *Backend) tryReserve(ctx context.Context, p backend.ReserveParams, uncount, count bool) (reserveOutcome, error) {
	if b.spread != nil {
		return b.trySpreadReserve(ctx, p, uncount, count) // spread_reserve.go
	}
	return b.tryReserveIn(ctx, b.base, p, p.Tubes, uncount, count)
}

// tryReserveIn is tryReserve of tubes in base's slot.
func (b *Backend) tryReserveIn(ctx context.Context, base string, p backend.ReserveParams, tubes []string, uncount, count bool) (reserveOutcome, error) {
	mode := 0
	if uncount {
		mode++
	}
	if count {
		mode += 2
	}
	args := make([]any, 0, 3+len(tubes))
	args = append(args, string(p.Session), ms(backend.DeadlineSoonMargin), strconv.Itoa(mode))
	for _, t := range tubes {
		args = append(args, t)
	}
	res, sent, err := b.callSentIn(ctx, base, opReserve, args...)
	if err != nil {
		return reserveOutcome{}, err
	}
	r := newReply(opReserve, res)
	switch r.int(0) {
	case 1:
		j, err := b.sawJob(r.job(1))
		return reserveOutcome{job: r.readyFor(j, 6), more: r.int(5) == 1}, err
	case 2:
		return reserveOutcome{soon: true}, r.err
	}
	return reserveOutcome{next: r.int(1), now: r.int(2), soonAt: r.int(3), sent: sent}, r.err
}

// reserveHanded reserves job id (padded), handed to this waiting reserve by a closing session
// (see waiters.handOut), if it is still ready in an unpaused tube the session watches; nil if not.
func (b *Backend) reserveHanded(ctx context.Context, p backend.ReserveParams, id string) (*backend.Job, error) {
	base, tubes := b.base, p.Tubes
	if b.spread != nil {
		bk, ok, err := b.handedBucket(ctx, p, id)
		if err != nil || !ok {
			return nil, err
		}
		base, tubes = b.spread.base(bk), p.Tubes
		defer func() { b.reservedIn(p.Session, bk) }()
	}
	args := make([]any, 0, 2+len(tubes))
	args = append(args, string(p.Session), id)
	for _, t := range tubes {
		args = append(args, t)
	}
	res, _, err := b.callSentIn(ctx, base, opReserveHanded, args...)
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil // the script's "someone was faster": the reserve goes on as usual
	}
	if err != nil || res == nil {
		return nil, err
	}
	r := newReply(opReserveHanded, res)
	j, err := b.sawJob(r.job(0))
	return r.readyFor(j, 4), err
}

// afterAt returns a channel closed once the backend's clock reaches at, and its stop func. The
// timer is set for a time, not a duration: a fake clock advanced after the caller read it must
// not make the timer a whole step late (see backend.AfterFuncAt).
func (b *Backend) afterAt(at time.Time) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	if h := b.waiters.beforeTimer; h != nil {
		h()
	}
	t := backend.AfterFuncAt(b.clock(), at, func() { close(ch) })
	return ch, func() { t.Stop() }
}

// dueGuard is added to a due time, so that the next try's script runs after it by Redis's
// clock: the wait is counted from when the last script was sent, and the next one reaches Redis
// about as long after being sent, give or take some tens of µs; a try that comes too early
// finds nothing and has to be made again.
const dueGuard = 100 * time.Microsecond

// dueTime is when, on the backend's clock, the due time at (ms) the reserve script reported in
// out comes. With an injected clock it is at itself (the script ran on that clock). Without one
// it is at − now (Redis's clock, now to the µs: counting from the whole millisecond made every
// wait up to a millisecond too long) counted from when the script was sent, not from when its
// reply came back: the script ran after it was sent, and its reply may come back much
// later than it ran (with one batch in flight, a waiter's reply comes with a batch of others;
// counting from the reply made every due time that much late, and a delayed job's lateness
// with it).
func (b *Backend) dueTime(at int64, out reserveOutcome) time.Time {
	if b.opts.Clock != nil {
		return time.UnixMilli(at)
	}
	return out.dueAt(at)
}

// dueAt is when, on this process's clock, at (ms) comes on Redis's (see dueTime).
func (out reserveOutcome) dueAt(at int64) time.Time {
	return out.sent.Add(time.Duration(at*1000-out.now)*time.Microsecond + dueGuard)
}

// ownTimer wakes a waiting reserve when its session's DEADLINE_SOON margin starts. It is
// re-armed only when that time changes or after it fired, so a fake clock's pending timers stay
// stable while a reserve waits.
type ownTimer struct {
	at     int64           // ms; armed when ch is not nil
	ch     <-chan struct{} // nil (never ready) when not armed
	cancel func()
}

func (t *ownTimer) arm(b *Backend, at int64, out reserveOutcome) {
	if t.ch != nil && t.at == at {
		return
	}
	t.stop()
	if at >= 0 {
		t.at = at
		t.ch, t.cancel = b.afterAt(b.dueTime(at, out))
	}
}

func (t *ownTimer) fired() { t.ch, t.cancel = nil, nil }

func (t *ownTimer) stop() {
	if t.cancel != nil {
		t.cancel()
	}
	t.fired()
}
