package main

import (
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// openLoopStampLen: an open-loop job body starts with two stamps, the put's due time and the time
// it was actually sent, so a worker can tell the server's delay from the harness's own lateness.
const openLoopStampLen = 2 * stampLen

// scheduledProducer sends its share of a schedule on one connection. send writes each put at its
// due time (late ones at once, flushed together) while receive reads the INSERTED replies, so a
// slow reply never holds back the next put: the offered rate is the schedule's, not the server's.
type scheduledProducer struct {
	r           *round
	c           *beanstalk.Conn
	plan        schedule
	index       int       // this producer's place among the plan's producers
	measureFrom time.Time // jobs due from here on are measured
	// lags are actual send minus due time of the measured jobs.
	lags []time.Duration
	// sent carries each put's send time (zero: not measured) from send to receive, which reads
	// the replies in the same order; inserted are INSERTED received minus those times.
	sent     chan time.Time
	inserted []time.Duration
	// insertedAt is when each measured job's INSERTED arrived, for inserted→reserved.
	insertedAt map[uint64]time.Time
}

func (p *scheduledProducer) send() error {
	body := newBody(max(p.r.opts.Body, openLoopStampLen))
	for i := p.index; i < p.plan.jobs; {
		if wait := time.Until(p.plan.due(i)); wait > 0 && !p.r.sleep(wait) {
			return nil
		}
		now := time.Now()
		for ; i < p.plan.jobs && !p.plan.due(i).After(now); i += p.plan.producers {
			due := p.plan.due(i)
			stamp(body[:stampLen], p.r.base, due)
			stamp(body[stampLen:openLoopStampLen], p.r.base, now)
			p.c.SendPut(jobPriority, 0, jobTTR, body)
			var at time.Time
			if !due.Before(p.measureFrom) {
				p.lags = append(p.lags, now.Sub(due))
				at = now
			}
			p.sent <- at
		}
		if err := p.c.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// receive reads one INSERTED per put of this producer's share. It only touches the connection's
// reader, send only its writer, so the two may run at once.
func (p *scheduledProducer) receive() error {
	for range p.plan.share(p.index) {
		id, err := p.c.ReadUint("INSERTED")
		if err != nil {
			return err
		}
		if at := <-p.sent; !at.IsZero() {
			now := time.Now()
			p.inserted = append(p.inserted, now.Sub(at))
			p.insertedAt[id] = now
		}
		if err := p.r.ledger.Inserted(id); err != nil {
			return err
		}
	}
	return nil
}
