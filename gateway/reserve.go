package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/beangate/beangate/backend"
)

// reserve answers reserve (timeout < 0) and reserve-with-timeout. The backend answers at once
// in the common case, when work is queued; only if nothing is ready are the replies queued so
// far flushed, the connection counted as waiting, and the socket watched for a hang-up while
// the backend waits.
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
			return true
		}
	} else {
		ctx, cancel := c.callContext()
		job, err = c.srv.cfg.Backend.Reserve(ctx, params)
		cancel()
		if errors.Is(err, backend.ErrTimedOut) && timeout != 0 {
			if job, err = c.waitReserve(params, timeout); err == nil {
				return true // waitReserve has answered
			}
		}
	}
	switch {
	case err == nil:
		c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
	case errors.Is(err, errHangup):
		c.reply(msgTimedOut) // as beanstalkd answers a client that half-closes while waiting
	case c.ctx.Err() != nil:
		return false // the server is stopping this connection
	default:
		c.replyError("reserve", err)
	}
	return true
}

// waitReserve waits for a job and, when one comes, answers RESERVED itself: it writes the reply
// before it stops the hang-up watch, whose stopping costs a read-deadline round trip with the
// watching goroutine, so that cost is not part of the wake-up latency clients see.
func (c *conn) waitReserve(params backend.ReserveParams, timeout time.Duration) (*backend.Job, error) {
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
	stop := c.watchHangup(hangup)
	params.Timeout = timeout
	job, err := c.srv.cfg.Backend.Reserve(ctx, params)
	if err == nil {
		c.sendReserved(job)
	}
	stop()
	if err != nil && errors.Is(context.Cause(ctx), errHangup) {
		return nil, errHangup
	}
	return job, err
}

// aLongTimeAgo is a read deadline that has passed: setting it ends a socket wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// sendReserved answers RESERVED at once, from a waiting reserve: the wake-up latency is what
// waiting workers feel.
func (c *conn) sendReserved(job *backend.Job) {
	c.out = appendJobReply(c.out, wordReserved, job.ID, job.Body)
	c.flush() // a failed write shows as the connection's next read error
}

// startReserve is reserve's path for a backend.ReserveStarter. If the backend has no answer at
// once, the wait runs on the connection's own goroutine: it waits for the socket (a hang-up
// ends the wait; bytes the client sends meanwhile are kept for the commands that follow), and
// the backend's wake sets a passed read deadline that ends the socket wait. No watcher
// goroutine to start and stop: a wake-up costs one goroutine switch. A job it waited for, it
// answers itself (answered); an immediate answer and errors are left to reserve.
func (c *conn) startReserve(rs backend.ReserveStarter, params backend.ReserveParams, timeout time.Duration) (job *backend.Job, answered bool, err error) {
	if c.wake == nil {
		c.wake = func() { _ = c.nc.SetReadDeadline(aLongTimeAgo) }
	}
	params.Timeout = timeout
	job, pending, err := rs.StartReserve(c.ctx, params, c.wake)
	if pending == nil {
		return job, false, err
	}
	job, err = c.awaitReserve(pending)
	if !c.stopping.Load() {
		_ = c.nc.SetReadDeadline(time.Time{}) // after the wake, which Cancel or the outcome orders first
	}
	if err != nil {
		return nil, false, err
	}
	c.sendReserved(job)
	return job, true, nil
}

// awaitReserve flushes the replies queued so far, counts the connection as waiting, and waits
// for pending's outcome while reading ahead from the socket.
func (c *conn) awaitReserve(pending backend.PendingReserve) (*backend.Job, error) {
	if !c.flush() {
		if job, err := pending.Cancel(); job != nil || err != nil {
			return job, err // decided first: answered, and returned when the session ends
		}
		return nil, errHangup
	}
	st := c.srv.stats
	st.beginWaiting(c.watch)
	defer st.endWaiting(c.watch)
	for {
		if job, err, decided := pending.Result(); decided {
			return job, err
		}
		if c.ctx.Err() != nil {
			if job, err := pending.Cancel(); job != nil || err != nil {
				return job, err
			}
			return nil, c.ctx.Err()
		}
		switch c.raw.readAhead() {
		case readAheadWoken:
			if c.ctx.Err() == nil {
				return pending.Wait() // woken by the backend: the outcome follows at once
			}
		case readAheadFull:
			return pending.Wait() // stop reading ahead; a hang-up now shows only after the wait
		case readAheadEnded:
			if job, err := pending.Cancel(); job != nil || err != nil {
				return job, err
			}
			return nil, errHangup
		}
	}
}
