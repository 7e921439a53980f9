package main

import (
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// runDrain: pre-load -jobs jobs (not measured), then -conns consumers reserve and delete until
// nothing is ready. Throughput is jobs deleted per second; latency is the reserve round trip.
func runDrain(r *round) ([]metric, error) {
	if err := preload(r, int64(r.opts.Jobs)); err != nil {
		return nil, err
	}
	ks, err := r.dialConsumers(r.opts.Conns, false, func(c *beanstalk.Conn) *consumer {
		return &consumer{r: r, c: c, command: "reserve-with-timeout 0", kind: reserveRoundTrip}
	})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	w := workers{r: r}
	for _, k := range ks {
		w.Go(k.run)
	}
	w.Wait()
	elapsed := time.Since(start)
	return append([]metric{throughput(r.ledger.deleted.Load(), elapsed)},
		latencyMetrics("reserve", consumerLatencies(ks))...), nil
}

// preload puts n jobs over a few deeply pipelined connections, spread over the round's tubes.
func preload(r *round, n int64) error {
	var sent atomic.Int64
	ps, err := r.dialProducers(max(len(r.tubes), 4), 0, func() next {
		if sent.Add(1) > n {
			return stopPuts
		}
		return sendPut
	})
	if err != nil {
		return err
	}
	w := workers{r: r}
	for _, p := range ps {
		p.depth = 64
		w.Go(p.run)
	}
	w.Wait()
	for _, p := range ps {
		_ = p.c.Close()
	}
	return r.Err()
}
