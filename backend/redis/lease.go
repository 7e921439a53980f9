package redis

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// heartbeatLoop refreshes the lease of every process this Backend has seen sessions of, three
// times per LeaseTTL, so that one late beat does not make the others take it for dead, and at
// once when the subscription was made again after a reconnect (Redis may have lost data; the
// restore loop is told too). Renewals run on their own: nothing else can hold one back, not a
// restore waiting for replicas (Options.WaitReplicas) nor one waiting out a timeout.
func (b *Backend) heartbeatLoop() {
	b.every(b.opts.LeaseTTL/3, b.reconnected, func() {
		ctx, cancel := context.WithTimeout(context.Background(), b.opts.CommandTimeout)
		b.renewLeases(ctx)
		cancel()
	})
}

// restoreLoop puts back what a store that lost data forgot (idfloor.go), three times per
// LeaseTTL and at once after a reconnect.
func (b *Backend) restoreLoop() {
	b.every(b.opts.LeaseTTL/3, b.restoreNow, func() {
		ctx, cancel := context.WithTimeout(context.Background(), b.opts.CommandTimeout)
		if err := b.restore(ctx); err != nil {
			b.failures.Background.Failed("redis: restoring the default tube and the job id floor failed", err)
		}
		cancel()
	})
}

// every runs f every d, and at once whenever now is signalled (nil: never), until Close; it is
// one of the goroutines Close waits for.
func (b *Backend) every(d time.Duration, now <-chan struct{}, f func()) {
	defer b.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-now:
		}
		f()
	}
}

func (b *Backend) renewLeases(ctx context.Context) {
	b.procsMu.Lock()
	procs := make([]string, 0, len(b.procs))
	for p := range b.procs {
		procs = append(procs, p)
	}
	b.procsMu.Unlock()
	if len(procs) == 0 {
		return
	}
	pipe := b.client.Pipeline()
	for _, p := range procs {
		pipe.Set(ctx, b.base+":lease:"+p, 1, b.opts.LeaseTTL)
		// A renewed lease clears a reaper's suspicion at once (see lua/reap.lua), not only
		// when the next reaper run sees the lease.
		pipe.Del(ctx, b.base+":suspect:"+p)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.failures.Background.Failed("redis: heartbeat failed", err)
	}
}

// reapGrace is how long a missing lease must have been seen missing before its process's
// sessions are ended: longer than the heartbeat period (LeaseTTL/3), so that a live gateway
// whose lease expired during a Redis outage renews it first. A dead gateway's reservations
// thus return within LeaseTTL + reapGrace + two reaper periods (2.5 × LeaseTTL): its lease
// expires, the next run suspects it, and the first run a grace later reaps it.
func (b *Backend) reapGrace() time.Duration { return b.opts.LeaseTTL / 2 }

// suspicionTTL is how long a suspicion lasts without a reaper run finding the lease missing
// again: a few reaper periods, so that runs late by a period or two still confirm it, while a
// gap longer than that (Redis down, so no heartbeat could renew the lease either) starts the
// grace over.
func (b *Backend) suspicionTTL() time.Duration { return 2 * b.opts.LeaseTTL }

// reapLoop ends the sessions of dead gateway processes, every LeaseTTL/2.
func (b *Backend) reapLoop() {
	b.every(b.opts.LeaseTTL/2, nil, func() {
		if err := b.Reap(context.Background()); err != nil {
			b.failures.Background.Failed("redis: reaping dead gateways failed", err)
		}
	})
}

// Reap ends now every session of every gateway process whose lease has been missing for the
// grace period (see reapGrace; a run that first finds a lease missing only records that), and
// reports how many. The reaper loop calls it; it is idempotent and safe from any number of
// gateways.
func (b *Backend) Reap(ctx context.Context) error {
	if b.spread != nil {
		return b.spreadReap(ctx)
	}
	res, err := b.call(ctx, opReap, ms(b.reapGrace()), ms(b.suspicionTTL()))
	if err != nil {
		return err
	}
	if n, _ := toInt(opReap, res); n > 0 {
		b.opts.Logger.Info("redis: ended sessions of dead gateways", "sessions", n)
	}
	return nil
}

// retryEndsLoop retries the ends that failed (see EndSession), three times per LeaseTTL.
func (b *Backend) retryEndsLoop() {
	b.every(b.opts.LeaseTTL/3, nil, b.retryEnds)
}

// retryEnds tries again to end each session whose end failed. They are ended concurrently, so
// that they go out together in a batch after an outage that left many behind.
func (b *Backend) retryEnds() {
	b.unendedMu.Lock()
	ss := slices.Collect(maps.Keys(b.unended))
	b.unendedMu.Unlock()
	if len(ss) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.CommandTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var ended atomic.Int64
	for _, s := range ss {
		wg.Go(func() {
			if _, err := b.endInStore(ctx, s); err != nil {
				return // logged when it first failed; tried again next tick
			}
			b.unendedMu.Lock()
			delete(b.unended, s)
			b.unendedMu.Unlock()
			ended.Add(1)
		})
	}
	wg.Wait()
	if n := ended.Load(); n > 0 { // one line for all: an outage may leave many
		b.opts.Logger.Info("redis: ended sessions on retry; their reservations are ready again", "sessions", n)
	}
}
