package main

import (
	"sync/atomic"
	"time"
)

// runPut: -conns producers put pipelined to depth -pipeline until -duration passes or -jobs
// have been sent. Throughput is INSERTED replies per second; latency is put to INSERTED. The jobs
// stay in the server until the round's cleanup deletes them by id (not measured).
func runPut(r *round) ([]metric, error) {
	var sent atomic.Int64
	var stop atomic.Bool
	limit := int64(r.opts.Jobs)
	ps, err := r.dialProducers(r.opts.Conns, 0, func() next {
		if stop.Load() || (limit > 0 && sent.Add(1) > limit) {
			return stopPuts
		}
		return sendPut
	})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	timer := time.AfterFunc(r.opts.Duration, func() { stop.Store(true) })
	defer timer.Stop()
	w := workers{r: r}
	for _, p := range ps {
		w.Go(p.run)
	}
	w.Wait()
	elapsed := time.Since(start)
	return append([]metric{throughput(r.ledger.inserted.Load(), elapsed)},
		latencyMetrics("put", producerLatencies(ps))...), nil
}
