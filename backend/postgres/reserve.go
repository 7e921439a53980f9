package postgres

import (
	"context"
	"time"

	"github.com/beangate/beangate/backend"
)

// pollInterval bounds how long a waiting reserve trusts hints alone: it tries again at least this
// often, so a lost notification (listener reconnecting) delays it at most this much.
const pollInterval = time.Second

// wakeSlack is added to timers set from database time so that the retry does not land a hair
// before the due moment on the database clock.
const wakeSlack = time.Millisecond

// Reserve reserves the best ready job over p.Tubes, waiting as the contract says.
func (b *Backend) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	// Registered before the first attempt, so a job made ready during it still wakes us.
	w := b.waiters.add(p.Tubes)
	gaveUp := false
	defer func() { b.waiters.remove(w, gaveUp) }()

	// The timeout runs from the call, not from the first database answer, so that a clock
	// advanced while the first attempt is in flight is not missed.
	timedOut := make(chan struct{})
	if p.Timeout > 0 {
		timeout := b.clock.AfterFunc(p.Timeout, func() { close(timedOut) })
		defer timeout.Stop()
	}
	for {
		// Read before the attempt: a timeout that fired earlier is answered only after an
		// attempt made at (fake) time past it found nothing, so that a job maturing before the
		// timeout, or a DEADLINE_SOON, still wins when the clock jumps past both.
		expired := isClosed(timedOut)
		// One "now" per attempt: what the wait learns is consistent with what the attempt saw.
		now := b.now()
		job, err := b.tryReserve(ctx, p, now)
		if err != nil || job != nil {
			gaveUp = err != nil
			return job, err
		}
		info, err := b.reserveWait(ctx, p, now)
		if err != nil {
			gaveUp = true
			return nil, err
		}
		if info.ownDeadline != nil && !info.now.Before(info.ownDeadline.Add(-backend.DeadlineSoonMargin)) {
			return nil, backend.ErrDeadlineSoon
		}
		if p.Timeout == 0 {
			return nil, backend.ErrTimedOut
		}
		if expired {
			return nil, backend.ErrTimedOut
		}
		if err := b.wait(ctx, w, info, timedOut); err != nil {
			gaveUp = true
			return nil, err
		}
	}
}

// wait blocks until a hint, the next due moment, the poll interval, the timeout or ctx.
func (b *Backend) wait(ctx context.Context, w *waiter, info waitInfo, timedOut <-chan struct{}) error {
	next := info.nextDue
	if info.ownDeadline != nil {
		soon := info.ownDeadline.Add(-backend.DeadlineSoonMargin)
		if next == nil || soon.Before(*next) {
			next = &soon
		}
	}
	if next != nil {
		var d time.Duration
		if b.opts.Clock != nil {
			d = next.Sub(b.opts.Clock.Now()) // the clock may have moved since the attempt
		} else {
			d = next.Sub(info.now) + wakeSlack
		}
		t := b.clock.AfterFunc(d, func() { w.signal() })
		defer t.Stop()
	}
	poll := time.NewTimer(pollInterval)
	defer poll.Stop()
	select {
	case <-w.ch:
	case <-timedOut: // the loop's next attempt sees it and answers TIMED_OUT
	case <-poll.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (b *Backend) tryReserve(ctx context.Context, p backend.ReserveParams, now any) (*backend.Job, error) {
	var job *backend.Job
	err := b.run(ctx, "reserve", func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, b.st.get("reserve"), now, p.Tubes, string(p.Session))
		if err != nil {
			return err
		}
		job, err = collectJob(rows)
		return err
	})
	return job, err
}

type waitInfo struct {
	now         time.Time
	ownDeadline *time.Time
	nextDue     *time.Time
}

func (b *Backend) reserveWait(ctx context.Context, p backend.ReserveParams, now any) (waitInfo, error) {
	var info waitInfo
	err := b.run(ctx, "reserve", func(ctx context.Context) error {
		return b.pool.QueryRow(ctx, b.st.get("reserve_wait"), now, p.Tubes, string(p.Session)).
			Scan(&info.now, &info.ownDeadline, &info.nextDue)
	})
	return info, err
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
