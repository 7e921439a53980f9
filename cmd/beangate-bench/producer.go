package main

import (
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// next tells a producer what to do about its next put.
type next int

const (
	sendPut  next = iota // send another put
	holdOn               // not now (backlog full): read replies, then ask again
	stopPuts             // no more puts this round
)

// producer puts jobs on one connection with up to depth puts in flight (a sliding window in
// one goroutine: top the window up, flush once, read what has arrived).
type producer struct {
	r     *round
	c     *beanstalk.Conn
	depth int
	delay uint32
	next  func() next
	// latencies are put-sent to INSERTED-received times.
	latencies []time.Duration
}

func (p *producer) run() error {
	body := newBody(p.r.opts.Body)
	sent := make([]time.Time, p.depth) // ring of send times of the puts in flight
	head, inflight := 0, 0
	for {
		want := sendPut
		for inflight < p.depth {
			if want = p.next(); want != sendPut {
				break
			}
			now := time.Now()
			stamp(body, p.r.base, now)
			p.c.SendPut(jobPriority, p.delay, jobTTR, body)
			sent[(head+inflight)%p.depth] = now
			inflight++
		}
		if err := p.c.Flush(); err != nil {
			return err
		}
		if inflight == 0 {
			if want == stopPuts {
				return nil
			}
			if !p.r.sleep(50 * time.Microsecond) {
				return nil
			}
			continue
		}
		// Read one reply (blocking), then any others that have already arrived.
		for first := true; inflight > 0 && (first || p.c.Buffered() > 0); first = false {
			id, err := p.c.ReadUint("INSERTED")
			if err != nil {
				return err
			}
			p.latencies = append(p.latencies, time.Since(sent[head]))
			head = (head + 1) % p.depth
			inflight--
			if err := p.r.ledger.Inserted(id); err != nil {
				return err
			}
		}
	}
}
