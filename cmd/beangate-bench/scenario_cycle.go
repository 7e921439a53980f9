package main

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// backlogDrainTimeout bounds how long consumers may take to finish the backlog after the
// measuring window; jobs still missing then count as lost.
const backlogDrainTimeout = 30 * time.Second

// runCycle: half the connections put (pipelined to -pipeline, pausing while -backlog jobs wait),
// the other half reserve and delete. Throughput is jobs deleted inside the -duration window per
// second; latency is the consumers' reserve round trip. With -conns 1 one connection does put,
// reserve, delete in turn.
func runCycle(r *round) ([]metric, error) {
	if r.opts.Conns == 1 {
		return runCycleAlone(r)
	}
	producers := r.opts.Conns / 2
	return cycleLoad(r, producers, r.opts.Conns-producers, false)
}

// runTubes: every one of the round's tubes has producers and workers of its own, -conns of
// them per tube (half producing, half reserving and deleting, watching only that tube), so
// that tubes the store places apart are loaded alike. Measured as cycle.
func runTubes(r *round) ([]metric, error) {
	if r.opts.Conns < 2 {
		return nil, errors.New("tubes needs -conns of at least 2 (a producer and a worker per tube)")
	}
	perTube := r.opts.Conns / 2
	return cycleLoad(r, perTube*len(r.tubes), (r.opts.Conns-perTube)*len(r.tubes), true)
}

// cycleLoad runs producers (each on tube i mod tubes, paused while -backlog jobs wait) and
// workers that reserve and delete (with spread each watching tube i mod tubes, else all of
// them) for -duration, then lets the workers finish the backlog.
func cycleLoad(r *round, producers, consumers int, spread bool) ([]metric, error) {
	var stop, stopped atomic.Bool
	backlog := int64(r.opts.Backlog)
	ps, err := r.dialProducers(producers, 0, func() next {
		switch {
		case stop.Load():
			return stopPuts
		case backlog > 0 && r.ledger.Backlog() >= backlog:
			return holdOn
		}
		return sendPut
	})
	if err != nil {
		return nil, err
	}
	ks, err := r.dialConsumers(consumers, spread, func(c *beanstalk.Conn) *consumer {
		return &consumer{r: r, c: c, command: "reserve", kind: reserveRoundTrip, stopped: &stopped}
	})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	prod, cons := workers{r: r}, workers{r: r}
	for _, k := range ks {
		cons.Go(k.run)
	}
	for _, p := range ps {
		prod.Go(p.run)
	}
	r.sleep(r.opts.Duration)
	completed, elapsed := r.ledger.deleted.Load(), time.Since(start)
	stop.Store(true)
	prod.Wait()
	if !r.waitUntil(backlogDrainTimeout, func() bool { return r.ledger.Backlog() == 0 }) && r.Err() == nil {
		r.fail(errors.New("consumers did not finish the backlog: jobs lost"))
	}
	stopped.Store(true)
	for _, k := range ks {
		_ = k.c.Close()
	}
	cons.Wait()
	return append([]metric{throughput(completed, elapsed)},
		latencyMetrics("reserve", consumerLatencies(ks))...), nil
}

// runCycleAlone is cycle on a single connection: put, reserve, delete, repeat.
func runCycleAlone(r *round) ([]metric, error) {
	c, err := r.dial()
	if err != nil {
		return nil, err
	}
	if err := c.Use(r.tubes[0]); err != nil {
		return nil, err
	}
	if err := c.WatchOnly(r.tubes[0]); err != nil {
		return nil, err
	}
	k := &consumer{r: r, c: c, command: "reserve", kind: reserveRoundTrip}
	body := newBody(r.opts.Body)
	start := time.Now()
	deadline := start.Add(r.opts.Duration)
	for time.Now().Before(deadline) {
		c.SendPut(jobPriority, 0, jobTTR, body)
		if err := c.Flush(); err != nil {
			return nil, err
		}
		id, err := c.ReadUint("INSERTED")
		if err != nil {
			return nil, err
		}
		if err := r.ledger.Inserted(id); err != nil {
			return nil, err
		}
		if err := k.one(); err != nil {
			return nil, err
		}
	}
	return append([]metric{throughput(r.ledger.deleted.Load(), time.Since(start))},
		latencyMetrics("reserve", consumerLatencies([]*consumer{k}))...), nil
}
