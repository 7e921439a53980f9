package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/beangate/beangate/backend"
)

// reserve answers reserve (timeout < 0) and reserve-with-timeout. The memory backend answers at
// once in the common case, when work is queued; only if nothing is ready are the replies queued
// so far flushed, the connection counted as waiting, and the socket watched for a hang-up while
// the backend waits. A store that waits itself (Redis, PostgreSQL) gets, after a reserve that
// had to wait, one waiting call, which tries at once; the socket is then watched only if that
// call lasts (hangupWatchDelay), and only such a lasting call counts as having waited.
func (c *conn) reserve(timeout time.Duration) bool {
	c.markWorker()
	if !c.sessionOrError() {
		return true
	}
	params := backend.ReserveParams{Session: c.sid, Tubes: c.watch}
	var (
		job *backend.Job
		err error
	)
	if rs := c.srv.starter; rs != nil && c.raw.rc != nil && timeout != 0 {
		// One backend call, which waits on this goroutine if it must.
		var answered bool
		if job, answered, err = c.startReserve(rs, params, timeout); answered {
			c.reserved(job)
			return true
		}
	} else if timeout != 0 && c.waited && !c.srv.nonBlocking {
		// A store that waits (Redis, PostgreSQL) tries at once inside its waiting call. After a
		// reserve that had to wait, the next one most likely waits too, and asking with timeout
		// 0 first would only cost the store a round trip.
		if job, err = c.waitReserve(params, timeout, hangupWatchDelay); err == nil {
			c.reserved(job)
			return true // waitReserve has answered
		}
	} else {
		ctx, cancel := c.callContext()
		job, err = c.srv.cfg.Backend.Reserve(ctx, params)
		cancel()
		c.waited = false
		if errors.Is(err, backend.ErrTimedOut) && timeout != 0 {
			if job, err = c.waitReserve(params, timeout, 0); err == nil {
				c.reserved(job)
				return true // waitReserve has answered
			}
		}
	}
	switch {
	case err == nil:
		c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
		c.reserved(job)
	case errors.Is(err, errHangup):
		c.reply(msgTimedOut) // as beanstalkd answers a client that half-closes while waiting
	case c.ctx.Err() != nil:
		return false // the server is stopping this connection
	default:
		c.replyError("reserve", err)
	}
	return true
}

// reserved reports a reserve's job to the Observer, if there is one.
func (c *conn) reserved(job *backend.Job) {
	if c.srv.obs != nil {
		c.noteReserved(job)
	}
}

// hangupWatchDelay is how long a reserve asked straight with its timeout runs before the socket
// is watched for a hang-up: most get their job at once, and a watch costs a goroutine and a
// read-deadline round trip to stop. A hang-up is then noticed at most this much later.
const hangupWatchDelay = 5 * time.Millisecond

// waitReserve waits for a job and, when one comes, answers RESERVED itself: it writes the reply
// before it stops the hang-up watch, whose stopping costs a read-deadline round trip with the
// watching goroutine, so that cost is not part of the wake-up latency clients see. The watch
// starts after watchAfter.
func (c *conn) waitReserve(params backend.ReserveParams, timeout, watchAfter time.Duration) (*backend.Job, error) {
	if !c.flush() {
		return nil, errHangup
	}
	st := c.srv.stats
	st.beginWaiting(c.watch)
	defer st.endWaiting(c.watch)

	ctx, hangup := context.WithCancelCause(c.ctx)
	defer hangup(nil)
	if timeout > 0 {
		// The backend enforces the timeout; this bound only keeps a stuck store from holding
		// the connection forever.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout+c.srv.cfg.BackendTimeout)
		defer cancel()
	}
	stop := c.watchHangupAfter(watchAfter, hangup)
	params.Timeout = timeout
	job, err := c.srv.cfg.Backend.Reserve(ctx, params)
	if err == nil {
		c.sendReserved(job)
	}
	c.waited = stop()
	if err != nil && errors.Is(context.Cause(ctx), errHangup) {
		return nil, errHangup
	}
	return job, err
}

// sendReserved answers RESERVED at once, from a waiting reserve: the wake-up latency is what
// waiting workers feel.
func (c *conn) sendReserved(job *backend.Job) {
	c.markAnswered()
	c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
	c.flush() // a failed write shows as the connection's next read error
}
