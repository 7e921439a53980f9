package main

import (
	"slices"
	"sync"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// workers runs functions concurrently; the first error fails the round (closing its
// connections so the others return too).
type workers struct {
	r  *round
	wg sync.WaitGroup
}

func (w *workers) Go(fn func() error) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.r.fail(fn())
	}()
}

func (w *workers) Wait() { w.wg.Wait() }

// dialProducers opens n connections, each using one of the round's tubes in turn.
func (r *round) dialProducers(n int, delay uint32, next func() next) ([]*producer, error) {
	ps := make([]*producer, n)
	for i := range ps {
		c, err := r.dial()
		if err != nil {
			return nil, err
		}
		if err := c.Use(r.tubes[i%len(r.tubes)]); err != nil {
			return nil, err
		}
		ps[i] = &producer{r: r, c: c, depth: max(r.opts.Pipeline, 1), delay: delay, next: next}
	}
	return ps, nil
}

// dialConsumers opens n connections; with spread each watches one tube in turn, otherwise
// every one watches all of the round's tubes.
func (r *round) dialConsumers(n int, spread bool, mk func(*beanstalk.Conn) *consumer) ([]*consumer, error) {
	ks := make([]*consumer, n)
	for i := range ks {
		c, err := r.dialAddr(r.target.consumer())
		if err != nil {
			return nil, err
		}
		tubes := r.tubes
		if spread {
			tubes = r.tubes[i%len(r.tubes) : i%len(r.tubes)+1]
		}
		if err := c.WatchOnly(tubes...); err != nil {
			return nil, err
		}
		ks[i] = mk(c)
	}
	return ks, nil
}

// waitUntil polls cond until it holds, the round fails, or the timeout passes.
func (r *round) waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || !r.sleep(time.Millisecond) {
			return false
		}
	}
	return true
}

func producerLatencies(ps []*producer) []time.Duration {
	return sortedLatencies(ps, func(p *producer) []time.Duration { return p.latencies })
}

func consumerLatencies(ks []*consumer) []time.Duration {
	return sortedLatencies(ks, func(k *consumer) []time.Duration { return k.latencies })
}

// sortedLatencies gathers every worker's latencies into one sorted slice.
func sortedLatencies[W any](ws []W, of func(W) []time.Duration) []time.Duration {
	var all []time.Duration
	for _, w := range ws {
		all = append(all, of(w)...)
	}
	slices.Sort(all)
	return all
}
