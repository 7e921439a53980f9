package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// waitingReserve is what a typical worker sends: it wakes at least once a second to check it
// should go on, so a server's TIMED_OUT path is exercised as well as its wake-ups.
const waitingReserve = "reserve-with-timeout 1"

// waitingWorker loops reserve-with-timeout, hold the job for handler, delete, on one connection,
// as a job queue's worker does. With the queue mostly empty it spends its time waiting in the
// server, so each job is delivered through the server's wake-up path.
type waitingWorker struct {
	r           *round
	c           *beanstalk.Conn
	handler     time.Duration
	measureFrom time.Time    // jobs due from here on are measured
	stopped     *atomic.Bool // set before the harness closes the connection to end the round
	// fromDue and fromSent are RESERVED received minus the put's due time and minus its actual
	// send time, for measured jobs.
	fromDue, fromSent []time.Duration
	reservedAt        map[uint64]time.Time // of measured jobs, for inserted→reserved
}

func (w *waitingWorker) run() error {
	for {
		err := w.one()
		switch {
		case err == nil:
		case errors.Is(err, beanstalk.ErrTimedOut) && !w.stopped.Load():
		case w.stopped.Load() && (isClosed(err) || errors.Is(err, beanstalk.ErrTimedOut)):
			return nil
		default:
			return err
		}
	}
}

// one waits for a job, records it, holds it and deletes it.
func (w *waitingWorker) one() error {
	w.c.Send(waitingReserve)
	if err := w.c.Flush(); err != nil {
		return err
	}
	id, body, err := w.c.ReadJob("RESERVED")
	if err != nil {
		return err
	}
	got := time.Now()
	if err := w.r.ledger.Reserved(id); err != nil {
		return err
	}
	if err := w.record(id, body, got); err != nil {
		return err
	}
	if w.handler > 0 {
		time.Sleep(w.handler)
	}
	w.c.SendDelete(id)
	if err := w.c.Flush(); err != nil {
		return err
	}
	if err := w.c.Expect("DELETED"); err != nil {
		return err
	}
	return w.r.ledger.Deleted(id)
}

// record keeps the job's latencies when it was due inside the measured window.
func (w *waitingWorker) record(id uint64, body []byte, got time.Time) error {
	due, ok1 := sentAt(body, w.r.base)
	sent, ok2 := sentAt(body[min(stampLen, len(body)):], w.r.base)
	if !ok1 || !ok2 {
		return fmt.Errorf("job %d: body without the open-loop time stamps", id)
	}
	if !due.Before(w.measureFrom) {
		w.fromDue = append(w.fromDue, got.Sub(due))
		w.fromSent = append(w.fromSent, got.Sub(sent))
		w.reservedAt[id] = got
	}
	return nil
}
