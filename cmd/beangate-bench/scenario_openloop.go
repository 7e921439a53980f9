package main

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"
)

// workersSettle is how long workers get to reach their waiting reserve before the first put is
// due.
const workersSettle = 100 * time.Millisecond

// runOpenLoop: -producers connections offer -rate puts per second on an open-loop schedule (each
// put sent at its due time, however long earlier ones took) while -conns workers loop
// reserve-with-timeout 1, hold the job for -handler, delete. Workers mostly wait, so this measures
// how a server wakes waiting reserves under a steady load. After -warmup comes the measured
// -duration: achieved is jobs deleted per second inside it; latency is RESERVED received minus
// the put's due time for the jobs due inside it, those delivered after it included.
func runOpenLoop(r *round) ([]metric, error) {
	start := time.Now().Add(workersSettle)
	measureFrom := start.Add(r.opts.Warmup)
	measureTo := measureFrom.Add(r.opts.Duration)
	var stopped atomic.Bool
	ws := make([]*waitingWorker, r.opts.Conns)
	for i := range ws {
		c, err := r.dialAddr(r.target.consumer())
		if err != nil {
			return nil, err
		}
		if err := c.WatchOnly(r.tubes...); err != nil {
			return nil, err
		}
		ws[i] = &waitingWorker{r: r, c: c, handler: r.opts.Handler, measureFrom: measureFrom, stopped: &stopped,
			reservedAt: map[uint64]time.Time{}}
	}
	ps, err := r.dialProducers(r.opts.Producers, 0, nil)
	if err != nil {
		return nil, err
	}
	cons := workers{r: r}
	for _, w := range ws {
		cons.Go(w.run)
	}
	plan := newSchedule(start, r.opts.Rate, len(ps), r.opts.Warmup+r.opts.Duration)
	sps := make([]*scheduledProducer, len(ps))
	prod := workers{r: r}
	for i, p := range ps {
		sps[i] = &scheduledProducer{r: r, c: p.c, plan: plan, index: i, measureFrom: measureFrom,
			sent: make(chan time.Time, plan.share(i)), insertedAt: map[uint64]time.Time{}}
		prod.Go(sps[i].send)
		prod.Go(sps[i].receive)
	}
	r.sleep(time.Until(measureFrom))
	before, from := r.ledger.deleted.Load(), time.Now()
	r.sleep(time.Until(measureTo))
	after, to := r.ledger.deleted.Load(), time.Now()
	prod.Wait()
	if !r.waitUntil(backlogDrainTimeout, func() bool { return r.ledger.Backlog() == 0 }) && r.Err() == nil {
		r.fail(errors.New("waiting workers did not receive every job: jobs lost"))
	}
	stopped.Store(true)
	for _, w := range ws {
		_ = w.c.Close()
	}
	cons.Wait()
	res := openLoopResult{offered: r.opts.Rate, deleted: after - before, window: to.Sub(from),
		fromDue:  sortedLatencies(ws, func(w *waitingWorker) []time.Duration { return w.fromDue }),
		fromSent: sortedLatencies(ws, func(w *waitingWorker) []time.Duration { return w.fromSent }),
		sendLag:  sortedLatencies(sps, func(p *scheduledProducer) []time.Duration { return p.lags }),
		inserted: sortedLatencies(sps, func(p *scheduledProducer) []time.Duration { return p.inserted }),
		delivery: deliveries(sps, ws),
	}
	return res.metrics(), nil
}

// deliveries are RESERVED received minus INSERTED received, sorted, for the measured jobs: the
// part of the latency after the put's acknowledgement. A job may reach its worker first (a
// server hands it out before it answers the put): that counts as zero.
func deliveries(ps []*scheduledProducer, ws []*waitingWorker) []time.Duration {
	var out []time.Duration
	for _, w := range ws {
		for id, got := range w.reservedAt {
			for _, p := range ps {
				if at, ok := p.insertedAt[id]; ok {
					out = append(out, max(0, got.Sub(at)))
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
