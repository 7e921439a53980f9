package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ErrUnreachable is an infrastructure error (INTERNAL_ERROR): the store is known to be
// unreachable, so the call was not sent.
var ErrUnreachable = errors.New("backend: store unreachable")

// Reachability fails a remote store's calls at once while the store is known to be
// unreachable, instead of holding every client for a whole command timeout: a silent network
// cut (packets dropped, not refused) would otherwise cost each command the full timeout. A call
// that fails as if the store did not answer (Failed) has the store probed at once; only if that
// probe gets no answer either is the store taken for unreachable (one slow statement on a live
// store is not an outage), and from then on calls fail with ErrUnreachable until a probe, every
// ProbeInterval, gets an answer.
type Reachability struct {
	probe        func(context.Context) error
	probeTimeout time.Duration
	onDown       func(error)
	log          *slog.Logger

	mu       sync.Mutex
	checking bool // a probe runs: suspected, or down
	down     bool
	since    time.Time
	lastErr  error
	stop     chan struct{}
	wg       sync.WaitGroup
}

// ProbeInterval is how often an unreachable store is probed.
const ProbeInterval = 200 * time.Millisecond

// NewReachability tracks a store that probe asks for an answer (a PING), each probe bounded by
// probeTimeout. onDown (may be nil) runs when the store is found unreachable: a pool drops its
// connections there, since they lead to a server that is gone or cut off.
func NewReachability(probe func(context.Context) error, probeTimeout time.Duration, onDown func(error), log *slog.Logger) *Reachability {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reachability{probe: probe, probeTimeout: probeTimeout, onDown: onDown, log: log, stop: make(chan struct{})}
}

// Check returns nil while the store is thought reachable, else an error wrapping
// ErrUnreachable and the failure that showed it.
func (r *Reachability) Check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down {
		return nil
	}
	return fmt.Errorf("%w for %v (probed every %v): %w", ErrUnreachable, time.Since(r.since).Round(time.Millisecond), ProbeInterval, r.lastErr)
}

// Failed reports a call that failed as if the store did not answer (a timeout, a broken or
// refused connection; the caller tells those from the store's own error replies). The store is
// probed at once, and taken for unreachable if the probe fails too.
func (r *Reachability) Failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checking {
		return
	}
	select {
	case <-r.stop:
		return
	default:
	}
	r.checking, r.lastErr = true, err
	r.wg.Add(1)
	go r.probeUntilUp()
}

// probeUntilUp probes at once, and while the probes fail, every ProbeInterval: the first
// failure takes the store for unreachable, an answer for reachable.
func (r *Reachability) probeUntilUp() {
	defer r.wg.Done()
	t := time.NewTicker(ProbeInterval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), r.probeTimeout)
		err := r.probe(ctx)
		cancel()
		r.mu.Lock()
		if err == nil {
			wasDown, since := r.down, r.since
			r.checking, r.down, r.lastErr = false, false, nil
			r.mu.Unlock()
			if wasDown {
				r.log.Info("store reachable again", "after", time.Since(since).Round(time.Millisecond))
			}
			return
		}
		if !r.down {
			r.down, r.since, r.lastErr = true, time.Now(), err
			r.mu.Unlock()
			r.log.Warn("store unreachable; failing calls at once until it answers", "err", err)
			if r.onDown != nil {
				r.onDown(err)
			}
		} else {
			r.lastErr = err
			r.mu.Unlock()
		}
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

// Close stops probing.
func (r *Reachability) Close() {
	r.mu.Lock()
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.mu.Unlock()
	r.wg.Wait()
}
