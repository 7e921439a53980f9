package ops

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

// Readiness decides /readyz: not ready until the store is open, while draining (SIGUSR1),
// once shutting down (SIGTERM), and while the store has been unreachable for longer than
// storeDownAfter. Transitions are logged; the store's own outage and recovery are the store's
// lines (backend.Reachability), not repeated here.
type Readiness struct {
	storeDownAfter time.Duration
	log            *slog.Logger
	now            func() time.Time

	mu             sync.Mutex
	open           bool
	draining       bool
	stopping       bool
	storeDownSince time.Time // zero while the store answers
	lastLogged     string    // the reason last logged, without a downtime (see reasonKind)
}

// NewReadiness starts not ready ("starting").
func NewReadiness(storeDownAfter time.Duration, log *slog.Logger) *Readiness {
	r := &Readiness{storeDownAfter: storeDownAfter, log: log, now: time.Now}
	r.lastLogged = reasonKind(r.reasonLocked())
	return r
}

// Check reports readiness and its reason, a short line of plain text.
func (r *Readiness) Check() (ready bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reason = r.reasonLocked()
	if kind := reasonKind(reason); kind != r.lastLogged {
		r.log.Info("readiness changed", "ready", reason == reasonReady, "reason", reason)
		r.lastLogged = kind
	}
	return reason == reasonReady, reason
}

// Ready is Check without the reason.
func (r *Readiness) Ready() bool {
	ok, _ := r.Check()
	return ok
}

const (
	reasonReady     = "ready"
	reasonStoreDown = "store unreachable" // followed by for how long
)

// reasonKind is reason without the store's downtime, which grows every second and is no
// transition to log.
func reasonKind(reason string) string {
	if strings.HasPrefix(reason, reasonStoreDown) {
		return reasonStoreDown
	}
	return reason
}

func (r *Readiness) reasonLocked() string {
	switch {
	case r.stopping:
		return "shutting down"
	case !r.open:
		return "starting: opening the store"
	case r.draining:
		return "draining (SIGUSR1): put answers DRAINING"
	case !r.storeDownSince.IsZero():
		if down := r.now().Sub(r.storeDownSince); down >= r.storeDownAfter {
			return fmt.Sprintf("%s for %s", reasonStoreDown, down.Round(time.Second))
		}
	}
	return reasonReady
}

func (r *Readiness) set(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
	r.Check() // logs the transition
}

// SetOpen marks the store open: serving may begin.
func (r *Readiness) SetOpen() { r.set(func() { r.open = true }) }

// SetDraining marks drain mode on.
func (r *Readiness) SetDraining() { r.set(func() { r.draining = true }) }

// SetStopping marks the shutdown begun: not ready for good.
func (r *Readiness) SetStopping() { r.set(func() { r.stopping = true }) }

// StoreAnswered records the outcome of a probe of the store.
func (r *Readiness) StoreAnswered(err error) {
	r.mu.Lock()
	switch {
	case err == nil:
		r.storeDownSince = time.Time{}
	case r.storeDownSince.IsZero():
		r.storeDownSince = r.now()
	}
	r.mu.Unlock()
	r.Check()
}

// WatchStore probes p every interval until ctx ends, each probe bounded by interval.
func (r *Readiness) WatchStore(ctx context.Context, p backend.Backend, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := p.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		r.StoreAnswered(err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
