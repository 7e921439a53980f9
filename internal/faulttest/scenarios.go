package faulttest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/ops"
)

// Store opens Backends on one store for the scenarios, each reaching it through host
// (127.0.0.1, or CutHost for the gateway whose path a NetCut cuts), with the given lease and
// command timeout.
type Store struct {
	Open           func(t *testing.T, host string) backend.Backend
	Lease          time.Duration
	CommandTimeout time.Duration
}

// RunNetCut cuts one of two gateways off from the store silently (packets dropped) for three
// leases (and at least twice the command timeout and 3 s) under load, then heals the cut. While
// cut, that gateway answers each command INTERNAL_ERROR at once (once the first commands timed
// out and a probe found the store unreachable) and its /readyz turns 503; the other
// gateway returns its reservations once its lease has run out; after the heal it serves again,
// and the ledger finds nothing lost or duplicated.
func RunNetCut(t *testing.T, s Store, cut *NetCut) {
	isolated := StartGateway(t, "isolated", s.Open(t, CutHost))
	peerStore := s.Open(t, "127.0.0.1")
	peer := StartGateway(t, "peer", peerStore)
	readiness := watchReadiness(t, isolated)

	ledger := NewLedger(time.Minute) // only a lost lease may explain a second delivery
	load := &Load{Ledger: ledger, Gateways: []Gateway{isolated, peer}}
	load.Start()
	time.Sleep(time.Second)
	holder := load.Hold(t, isolated, 5)
	if !readiness.Ready() {
		t.Fatal("the isolated gateway was not ready before the cut")
	}

	cut.Cut()
	began := time.Now() // a moment late: the lease rules below are checked the stricter
	ledger.CutOff(isolated.Name, began, s.Lease)
	// Every held job comes back, to the peer's workers, once the lease has run out.
	var back time.Duration
	ok := waitFor(3*s.Lease+5*time.Second, func() bool {
		back = 0
		for _, id := range holder.IDs() {
			at, ok := ledger.DeliveredAgain(id, holder.Name())
			if !ok {
				return false
			}
			back = max(back, at.Sub(began))
		}
		return true
	})
	if !ok {
		t.Errorf("the isolated gateway's reservations did not come back within %v", 3*s.Lease+5*time.Second)
	}
	t.Logf("the isolated gateway's reservations were handed out again %v after the cut (lease %v)", back.Round(time.Millisecond), s.Lease)
	// The first commands wait out the command timeout; a probe (up to a second) then finds the
	// store unreachable; the commands sent meanwhile wait out their own timeout.
	settled := began.Add(2*s.CommandTimeout + time.Second)
	if rest := time.Until(began.Add(max(3*s.Lease, 2*s.CommandTimeout+3*time.Second))); rest > 0 {
		time.Sleep(rest)
	}
	if readiness.Ready() {
		t.Error("/readyz of the isolated gateway still answered 200 after three leases without its store")
	}
	// Commands sent once the store was known unreachable were answered at once.
	slowest, failed := ledger.SlowestFailure(isolated.Name, settled, time.Now())
	t.Logf("while cut, the isolated gateway failed %d commands, the slowest answered after %v", failed, slowest.Round(time.Millisecond))
	if failed == 0 {
		t.Error("the isolated gateway failed no command while cut off")
	}
	if slowest > time.Second {
		t.Errorf("a command sent through the cut-off gateway waited %v for its INTERNAL_ERROR (command timeout %v)", slowest, s.CommandTimeout)
	}

	healed := time.Now()
	cut.Heal()
	ledger.Fault("cut healed")
	if !waitFor(10*time.Second, readiness.Ready) {
		t.Error("/readyz of the isolated gateway stayed 503 for 10 s after the heal")
	}
	t.Logf("/readyz of the isolated gateway answered 200 again %v after the heal", time.Since(healed).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	load.Stop()
	holder.DeleteAll(t, true)
	holder.Close()
	t.Logf("drained %d jobs", load.Drain(t, peer, 3*time.Second))
	v := ledger.Check(t)
	if v.Recovery["cut healed"] <= 0 {
		t.Error("the isolated gateway did not serve again after the heal")
	}
}

// watchReadiness probes gw's store as the beangate command's /readyz does (a probe a
// second; 503 once the store has been unreachable for a second here).
func watchReadiness(t *testing.T, gw Gateway) *ops.Readiness {
	t.Helper()
	r := ops.NewReadiness(time.Second, slog.New(slog.DiscardHandler))
	r.SetOpen()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.WatchStore(ctx, gw.Backend, 500*time.Millisecond)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// RunSlowStore runs load through two gateways whose store is delay away (each way, through a
// SlowLink): every reply stays correct, and nothing fails.
func RunSlowStore(t *testing.T, s Store, delay time.Duration) {
	gws := []Gateway{StartGateway(t, "gw1", s.Open(t, "127.0.0.1")), StartGateway(t, "gw2", s.Open(t, "127.0.0.1"))}
	ledger := NewLedger(5 * time.Second)
	load := &Load{Ledger: ledger, Gateways: gws, Workers: 4}
	load.Start()
	time.Sleep(3 * time.Second)
	load.Stop()
	t.Logf("drained %d jobs", load.Drain(t, gws[1], 2*time.Second))
	v := ledger.Check(t)
	for gw, e := range v.Errors {
		t.Errorf("%s failed %d commands through a store %v away", gw, e.Count, 2*delay)
	}
}
