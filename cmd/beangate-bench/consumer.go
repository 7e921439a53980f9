package main

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// latencyKind says what a consumer measures for each job.
type latencyKind int

const (
	reserveRoundTrip latencyKind = iota // `reserve` sent to RESERVED received
	sinceSent                           // put sent (stamped in the body) to RESERVED received
	lateness                            // RESERVED received minus the job's due time
)

// consumer reserves and deletes jobs on one connection, recording each in the ledger.
type consumer struct {
	r       *round
	c       *beanstalk.Conn
	command string // "reserve", or "reserve-with-timeout 0" to stop when nothing is ready
	kind    latencyKind
	due     time.Duration // the put delay, for lateness
	stopped *atomic.Bool  // set before the harness closes the connection to end the round
	// latencies are per job, of the kind above.
	latencies []time.Duration
}

func (k *consumer) run() error {
	err := k.loop()
	if err != nil && k.stopped != nil && k.stopped.Load() && isClosed(err) {
		return nil
	}
	if errors.Is(err, beanstalk.ErrTimedOut) {
		return nil
	}
	return err
}

func (k *consumer) loop() error {
	for {
		if err := k.one(); err != nil {
			return err
		}
	}
}

// one reserves a job, records it and deletes it.
func (k *consumer) one() error {
	k.c.Send(k.command)
	if err := k.c.Flush(); err != nil {
		return err
	}
	asked := time.Now()
	id, body, err := k.c.ReadJob("RESERVED")
	if err != nil {
		return err
	}
	got := time.Now()
	switch k.kind {
	case reserveRoundTrip:
		k.latencies = append(k.latencies, got.Sub(asked))
	case sinceSent, lateness:
		if sent, ok := sentAt(body, k.r.base); ok {
			d := got.Sub(sent)
			if k.kind == lateness {
				d -= k.due
			}
			k.latencies = append(k.latencies, d)
		}
	}
	if err := k.r.ledger.Reserved(id); err != nil {
		return err
	}
	k.c.SendDelete(id)
	if err := k.c.Flush(); err != nil {
		return err
	}
	if err := k.c.Expect("DELETED"); err != nil {
		return err
	}
	return k.r.ledger.Deleted(id)
}
