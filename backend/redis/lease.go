package redis

import (
	"context"
	"time"
)

// heartbeatLoop refreshes the lease of every process this Backend has seen sessions of, three
// times per LeaseTTL, so that one late beat does not make the others take it for dead.
func (b *Backend) heartbeatLoop() {
	b.every(b.opts.LeaseTTL/3, b.heartbeat)
}

// every runs f every d until Close; it is one of the goroutines Close waits for.
func (b *Backend) every(d time.Duration, f func()) {
	defer b.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			f()
		}
	}
}

func (b *Backend) heartbeat() {
	b.procsMu.Lock()
	procs := make([]string, 0, len(b.procs))
	for p := range b.procs {
		procs = append(procs, p)
	}
	b.procsMu.Unlock()
	if len(procs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.CommandTimeout)
	defer cancel()
	pipe := b.client.Pipeline()
	for _, p := range procs {
		pipe.Set(ctx, b.base+":lease:"+p, 1, b.opts.LeaseTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.opts.Logger.Warn("redis: heartbeat failed", "err", err)
	}
}

// reapLoop ends the sessions of dead gateway processes, every LeaseTTL/2.
func (b *Backend) reapLoop() {
	b.every(b.opts.LeaseTTL/2, func() {
		if err := b.Reap(context.Background()); err != nil {
			b.opts.Logger.Warn("redis: reaping dead gateways failed", "err", err)
		}
	})
}

// Reap ends now every session of every gateway process whose lease has expired, and reports
// how many. The reaper loop calls it; it is idempotent and safe from any number of gateways.
func (b *Backend) Reap(ctx context.Context) error {
	res, err := b.call(ctx, opReap)
	if err != nil {
		return err
	}
	if n, _ := toInt(res); n > 0 {
		b.opts.Logger.Info("redis: ended sessions of dead gateways", "sessions", n)
	}
	return nil
}
