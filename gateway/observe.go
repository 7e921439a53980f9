package gateway

import (
	"time"

	"github.com/beangate/beangate/backend"
)

// maxHeld bounds the reservations a connection tracks for the reserve-to-delete time; a worker
// that holds more loses the oldest figures, not memory.
const maxHeld = 64

// heldJob is a reservation of this connection, for the reserve-to-delete time.
type heldJob struct {
	id   uint64
	tube TubeObserver
	at   time.Time
}

// executeObserved is execute measured for the Observer: the command, its result and its time
// (until the reply was made: a reserve answered from another goroutine sets answeredAt).
//
//go:noinline
func (c *conn) executeObserved(line []byte) bool {
	c.cmdStart = time.Now()
	c.res, c.cmdID, c.answeredAt = ResultOK, commandUnknown, time.Time{}
	keepOpen := c.execute(line)
	end := c.answeredAt
	if end.IsZero() {
		end = time.Now()
	}
	c.srv.obs.CommandDone(c.cmdID, c.res, end.Sub(c.cmdStart))
	return keepOpen
}

// markAnswered notes when a reserve's RESERVED was made, if it is made before the command
// returns to the loop.
func (c *conn) markAnswered() {
	if c.srv.obs != nil && c.answeredAt.IsZero() {
		c.answeredAt = time.Now()
	}
}

// noteReserved reports a reserve's job: how long the reserve waited for it, how long it had
// been ready, and starts its reserve-to-delete clock.
func (c *conn) noteReserved(job *backend.Job) {
	c.markAnswered()
	c.srv.obs.ReserveWaited(c.answeredAt.Sub(c.cmdStart))
	c.hold(job, c.answeredAt)
}

func (c *conn) hold(job *backend.Job, at time.Time) {
	t := c.tubeObserver(job.Tube)
	if job.HasReadyFor {
		t.ReadyWaited(job.ReadyFor)
	}
	if len(c.held) == maxHeld {
		c.held = c.held[:copy(c.held, c.held[1:])]
	}
	c.held = append(c.held, heldJob{id: job.ID, tube: t, at: at})
}

// unhold forgets reservation id (released, buried or deleted); a delete reports its time.
func (c *conn) unhold(id uint64, deleted bool) {
	for i := len(c.held) - 1; i >= 0; i-- {
		if h := c.held[i]; h.id == id {
			if deleted {
				h.tube.Processed(time.Since(h.at))
			}
			c.held = append(c.held[:i], c.held[i+1:]...)
			return
		}
	}
}

// tubeObserver is the Observer's TubeObserver of name, cached for the connection's last tube.
func (c *conn) tubeObserver(name string) TubeObserver {
	if c.tubeObs == nil || c.tubeName != name {
		c.tubeName, c.tubeObs = name, c.srv.obs.Tube(name)
	}
	return c.tubeObs
}
