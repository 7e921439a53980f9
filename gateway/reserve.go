package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/beangate/beangate/backend"
)

// reserve answers reserve (timeout < 0) and reserve-with-timeout with one store call,
// StartReserve. An outcome the store has at once — work is queued, or the timeout is 0 — is
// answered like any other reply. When the reserve waits, the replies queued so far are flushed,
// the connection counts as waiting and watches its socket for a hang-up, and the outcome is
// handed over by whichever goroutine decides it (waitingReserve).
func (c *conn) reserve(timeout time.Duration) bool {
	c.markWorker()
	if !c.sessionOrError() {
		return true
	}
	job, answered, err := c.startReserve(timeout)
	switch {
	case answered:
	case err == nil:
		c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
	case errors.Is(err, errHangup):
		c.reply(msgTimedOut) // as beanstalkd answers a client that half-closes while waiting
		return true
	case c.ctx.Err() != nil:
		return false // the server is stopping this connection
	default:
		c.replyError("reserve", err)
		return true
	}
	c.reserved(job)
	return true
}

// startReserve makes the store call and, if the reserve waits, waits on the connection's own
// goroutine (waitingReserve.await). answered reports that RESERVED has been made, by either
// goroutine; an immediate answer and errors are left to reserve.
func (c *conn) startReserve(timeout time.Duration) (job *backend.Job, answered bool, err error) {
	if c.waiting == nil {
		c.waiting = newWaitingReserve(c)
	}
	ctx, cancel := c.reserveContext(timeout)
	defer cancel() // after the outcome: a store may wait through ctx
	params := backend.ReserveParams{Session: c.sid, Tubes: c.reserveTubes(), Timeout: timeout}
	job, pending, err := c.store.StartReserve(ctx, params, c.waiting.deliverFn)
	if pending == nil {
		return job, false, err
	}
	job, answered, err = c.waiting.await(pending)
	if err == nil && !answered {
		c.sendReserved(job)
		answered = true
	}
	return job, answered, err
}

// reserveContext bounds a reserve, its wait included, as callContext bounds other calls, with
// the timeout added: the store enforces the timeout, and the bound only keeps a stuck store
// from holding the connection forever. A reserve without a timeout is bounded by the store's
// own limit on each of its round trips.
func (c *conn) reserveContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	if c.srv.inProcess || timeout < 0 {
		return c.ctx, noCancel
	}
	return context.WithTimeout(c.ctx, timeout+c.srv.cfg.BackendTimeout)
}

// reserved reports a reserve's job to the Observer, if there is one.
func (c *conn) reserved(job *backend.Job) {
	c.holdsJob(job)
	if c.srv.obs != nil {
		c.noteReserved(job)
	}
}

// sendReserved answers RESERVED at once, from a waiting reserve: the wake-up latency is what
// waiting workers feel.
func (c *conn) sendReserved(job *backend.Job) {
	c.markAnswered()
	c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
	c.flush() // a failed write shows as the connection's next read error
}
