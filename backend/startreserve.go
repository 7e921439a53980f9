package backend

import (
	"context"
	"sync"
)

// PendingReserve is a waiting reserve started by StartReserve.
type PendingReserve interface {
	// Cancel gives the wait up and reports whether it did. False means the outcome was decided
	// first: deliver has been called with it or is about to be (a job then stays reserved by the
	// session, as with a Reserve that returned it).
	Cancel() bool
}

// StartBlockingReserve is StartReserve for a store whose Reserve waits itself (a store kept in
// a server, waiting for its notifications): it runs reserve on a goroutine of its own and
// delivers what it returns. With p.Timeout == 0 it calls reserve on the caller's goroutine. One
// call serves a reserve that finds a job at once and one that waits: such a Reserve tries
// before it waits.
func StartBlockingReserve(ctx context.Context, reserve func(context.Context, ReserveParams) (*Job, error),
	p ReserveParams, deliver func(*Job, error)) (*Job, PendingReserve, error) {
	if p.Timeout == 0 {
		job, err := reserve(ctx, p)
		return job, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &blockingReserve{cancel: cancel, returned: make(chan struct{})}
	go func() {
		defer close(w.returned)
		job, err := reserve(ctx, p)
		cancel()
		w.mu.Lock()
		// A job is delivered even after Cancel: it is reserved by the session, and must not be
		// left so unseen.
		w.delivered = job != nil || !w.cancelled
		w.mu.Unlock()
		if w.delivered {
			deliver(job, err)
		}
	}()
	return nil, w, nil
}

// blockingReserve is the PendingReserve of StartBlockingReserve.
type blockingReserve struct {
	cancel   context.CancelFunc // ends the Reserve's wait
	returned chan struct{}      // closed once the Reserve has returned and its outcome is handled

	mu        sync.Mutex
	cancelled bool // Cancel was called
	delivered bool // the outcome went to deliver
}

// Cancel ends the Reserve's wait and waits for it to return: what it returns decides whether
// the wait was given up.
func (w *blockingReserve) Cancel() bool {
	w.mu.Lock()
	w.cancelled = true
	w.mu.Unlock()
	w.cancel()
	<-w.returned
	return !w.delivered
}
