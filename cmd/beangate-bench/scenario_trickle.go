package main

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// runReserveWait: -conns consumers block in `reserve`, spread over -tubes tubes; one put every
// -interval, round-robin over the tubes. Latency is put sent to RESERVED received: the server's
// wake-up path, since a consumer is already waiting for every job.
func runReserveWait(r *round) ([]metric, error) {
	return trickle(r, 0, sinceSent, "wake-up")
}

// runDelayed: like reserve-wait, but every job is put with delay 1 s. Latency is lateness: how
// long after its due time (put sent + 1 s) the job reached a waiting consumer.
func runDelayed(r *round) ([]metric, error) {
	return trickle(r, 1, lateness, "lateness")
}

// trickle puts one job every -interval for -duration while consumers wait, then waits for the
// last job to be delivered.
func trickle(r *round, delaySeconds uint32, kind latencyKind, what string) ([]metric, error) {
	due := time.Duration(delaySeconds) * time.Second
	var stopped atomic.Bool
	ks, err := r.dialConsumers(r.opts.Conns, true, func(c *beanstalk.Conn) *consumer {
		return &consumer{r: r, c: c, command: "reserve", kind: kind, due: due, stopped: &stopped}
	})
	if err != nil {
		return nil, err
	}
	cons := workers{r: r}
	for _, k := range ks {
		cons.Go(k.run)
	}
	ps, err := r.dialProducers(len(r.tubes), delaySeconds, nil)
	if err != nil {
		return nil, err
	}
	// Let every consumer reach its blocking reserve before the first put.
	r.sleep(100 * time.Millisecond)
	body := newBody(max(r.opts.Body, stampLen))
	start := time.Now()
	for i := 0; r.Err() == nil; i++ {
		at := start.Add(time.Duration(i) * r.opts.Interval)
		if !at.Before(start.Add(r.opts.Duration)) {
			break
		}
		if wait := time.Until(at); wait > 0 && !r.sleep(wait) {
			break
		}
		if err := putOne(r, ps[i%len(ps)].c, delaySeconds, body); err != nil {
			return nil, err
		}
	}
	elapsed := time.Since(start)
	if !r.waitUntil(due+backlogDrainTimeout, func() bool { return r.ledger.Backlog() == 0 }) && r.Err() == nil {
		r.fail(errors.New("waiting consumers did not receive every job: jobs lost"))
	}
	stopped.Store(true)
	for _, k := range ks {
		_ = k.c.Close()
	}
	cons.Wait()
	return append([]metric{throughput(r.ledger.deleted.Load(), elapsed)},
		latencyMetrics(what, consumerLatencies(ks))...), nil
}

// putOne puts a single stamped job and records its INSERTED id.
func putOne(r *round, c *beanstalk.Conn, delaySeconds uint32, body []byte) error {
	stamp(body, r.base, time.Now())
	c.SendPut(jobPriority, delaySeconds, jobTTR, body)
	if err := c.Flush(); err != nil {
		return err
	}
	id, err := c.ReadUint("INSERTED")
	if err != nil {
		return err
	}
	return r.ledger.Inserted(id)
}
