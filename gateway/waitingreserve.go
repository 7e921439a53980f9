package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

// aLongTimeAgo is a read deadline that has passed: setting it ends a socket wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// waitingReserve hands a waiting reserve's outcome from the goroutine that decides it to the
// connection. It is reused by the connection's successive waits.
//
// The wait runs on the connection's own goroutine, which watches the socket for a hang-up (bytes
// the client sends meanwhile are kept for the commands that follow), and the outcome is
// delivered on the goroutine that decides it: a producer's inside its put, or one of the
// store's own. A job is answered from there, with one non-blocking socket write: the waiting
// client's RESERVED does not wait for this connection's goroutine to be scheduled, and that
// goroutine is not woken at all unless it has something left to do. A connection without a
// RawConn (TLS) can be neither written to without blocking nor watched by its own goroutine
// while that waits: a goroutine of its own watches it, and the connection's goroutine answers.
type waitingReserve struct {
	c         *conn
	answers   bool                      // deliver answers a job itself: the connection has a RawConn
	deliverFn func(*backend.Job, error) // deliver, made once
	decided   chan struct{}             // one token per delivered outcome

	mu       sync.Mutex // guards the fields below, and c.out and c.w while armed
	armed    bool       // the replies before the reserve are flushed and the connection counts as waiting
	done     bool       // the outcome is in
	job      *backend.Job
	err      error
	took     bool      // deliver made the RESERVED reply (what it could not write is left in c.out)
	tookAt   time.Time // when, with an Observer
	woken    bool      // deliver set a passed read deadline to wake the connection's goroutine
	needWake bool      // that goroutine must be woken when the outcome is in: it holds unread commands
}

func newWaitingReserve(c *conn) *waitingReserve {
	w := &waitingReserve{c: c, answers: c.raw.rc != nil, decided: make(chan struct{}, 1)}
	w.deliverFn = w.deliver
	return w
}

// deliver is the backend's callback with the outcome. While armed, on a connection it answers
// (a RawConn), it answers a job itself, and it wakes the connection's goroutine only when that
// has work: an error to answer, a reply the socket did not take whole, or commands the client
// sent meanwhile.
func (w *waitingReserve) deliver(job *backend.Job, err error) {
	c := w.c
	w.mu.Lock()
	w.done, w.job, w.err = true, job, err
	if w.armed && !w.answers {
		w.armed = false
		c.ctr.endWaiting(c.watch)
	} else if w.armed {
		w.armed = false
		if err == nil {
			w.took = true
			if c.srv.obs != nil {
				w.tookAt = time.Now()
			}
			c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
			// Only what the socket takes now: a slow reader must not hold up this goroutine.
			// A failed write shows as the connection's next read error.
			n, _ := c.w.write(c.out, false)
			c.out = c.out[:copy(c.out, c.out[n:])]
		}
		c.ctr.endWaiting(c.watch)
		if !w.took || len(c.out) > 0 || w.needWake {
			w.woken = true
			_ = c.nc.SetReadDeadline(aLongTimeAgo)
		}
	}
	w.mu.Unlock()
	w.decided <- struct{}{}
}

// await flushes the replies queued so far, arms the wait and watches the socket until the
// outcome is in, reading ahead what the client sends meanwhile.
func (w *waitingReserve) await(pending backend.PendingReserve) (*backend.Job, bool, error) {
	c := w.c
	flushed := c.flush()
	w.mu.Lock()
	if !w.done && flushed {
		w.armed = true
		c.ctr.beginWaiting(c.watch)
	}
	w.mu.Unlock()
	if !flushed {
		return w.cancel(pending, errHangup)
	}
	if !w.answers {
		return w.awaitWatched(pending)
	}
	for {
		w.mu.Lock()
		if w.done {
			w.mu.Unlock()
			return w.finish()
		}
		w.needWake = len(c.raw.pending) > 0 || c.in.Buffered() > 0
		w.mu.Unlock()
		if err := c.ctx.Err(); err != nil {
			return w.cancel(pending, err)
		}
		switch c.raw.readAhead() {
		case readAheadFull:
			return w.finish() // stop reading ahead; a hang-up now shows only after the wait
		case readAheadEnded:
			return w.cancel(pending, errHangup)
		}
		// readAheadWoken, or input kept for later: look again
	}
}

// cancel gives the wait up with err, unless the outcome was decided first.
func (w *waitingReserve) cancel(pending backend.PendingReserve, err error) (*backend.Job, bool, error) {
	if !pending.Cancel() {
		return w.finish() // decided first: answered, and returned when the session ends
	}
	w.mu.Lock()
	if w.armed {
		w.armed = false
		w.c.ctr.endWaiting(w.c.watch)
	}
	w.mu.Unlock()
	return nil, false, err
}

// awaitWatched is await for a connection without a RawConn: a goroutine of its own watches the
// socket for a hang-up until the outcome is in, and a job is answered here.
func (w *waitingReserve) awaitWatched(pending backend.PendingReserve) (*backend.Job, bool, error) {
	c := w.c
	ctx, hangup := context.WithCancelCause(c.ctx)
	defer hangup(nil)
	stop := c.watchHangup(hangup)
	select {
	case <-w.decided:
		job, _, err := w.take()
		if err == nil {
			c.sendReserved(job) // before the watch stops: its stop costs a read-deadline round trip
		}
		stop()
		return job, err == nil, err
	case <-ctx.Done():
		stop()
		return w.cancel(pending, context.Cause(ctx))
	}
}

// finish waits for the delivered outcome and takes it (see take).
func (w *waitingReserve) finish() (*backend.Job, bool, error) {
	<-w.decided
	return w.take()
}

// take returns the delivered outcome and readies the hand-over for the next wait. took reports
// that deliver answered RESERVED; whatever of it the socket did not take is written now.
func (w *waitingReserve) take() (*backend.Job, bool, error) {
	c := w.c
	w.mu.Lock()
	job, err, took, woken := w.job, w.err, w.took, w.woken
	if took && !w.tookAt.IsZero() {
		c.answeredAt = w.tookAt
	}
	w.done, w.job, w.err, w.took, w.woken, w.needWake = false, nil, nil, false, false, false
	w.tookAt = time.Time{}
	w.mu.Unlock()
	if woken && !c.stopping.Load() {
		_ = c.nc.SetReadDeadline(time.Time{})
	}
	if took && len(c.out) > 0 {
		c.flush()
	}
	return job, took, err
}
