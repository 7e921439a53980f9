package backendtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// NewPair makes two backends sharing one store, as two gateways of a fleet do, on one clock
// (a *clocktest.Fake). A store kept in one process returns the same backend twice.
type NewPair func(t *testing.T, clock backend.Clock) (backend.Backend, backend.Backend)

// RunSharedPolicies runs the policy cases that need two gateways on one store: a cap, a rate
// and a policy set on one gateway hold for both; and the schedule cases: a tick fired by both
// puts one job.
func RunSharedPolicies(t *testing.T, newPair NewPair) {
	for _, c := range append(sharedPolicyCases[:len(sharedPolicyCases):len(sharedPolicyCases)], scheduleSharedCases...) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := clocktest.NewFake(Epoch)
			a, b := newPair(t, clock)
			c.run(&harness{T: t, b: a, clock: clock, process: "gw-a"}, &harness{T: t, b: b, clock: clock, process: "gw-b"})
		})
	}
}

type pairCase struct {
	name string
	run  func(a, b *harness)
}

var sharedPolicyCases = []pairCase{
	{"TwoGatewaysRacingOnACapNeverExceedIt", func(a, b *harness) {
		a.setPolicy(backend.Policy{Tube: "work", MaxReserved: 3})
		p := a.worker("work")
		for range 20 {
			p.put(job{})
		}
		var workers []*client
		for range 8 {
			workers = append(workers, a.worker("work"), b.worker("work"))
		}
		require.Equal(a, 3, raceReserves(workers))
		require.Equal(a, uint64(3), b.tubeStats("work").ReservedJobs)
	}},
	{"ASlotFreedOnOneGatewayWakesAReserveWaitingOnTheOther", func(a, b *harness) {
		a.setPolicy(backend.Policy{Tube: "work", MaxReserved: 1})
		c := a.worker("work")
		held := c.put(job{})
		next := c.put(job{pri: 1})
		c.reserveID(held)
		p := b.worker("work").reserveAsync(forever)
		p.requireWaiting()
		c.delete(held)
		p.requireJob(next)
	}},
	{"TwoGatewaysShareOneRate", func(a, b *harness) {
		a.setPolicy(backend.Policy{Tube: "work", Rate: 1})
		ca, cb := a.worker("work"), b.worker("work")
		first := ca.put(job{})
		second := ca.put(job{})
		cb.reserveID(first)
		ca.requireNothing(backend.ErrTimedOut)
		cb.requireNothing(backend.ErrTimedOut)
		a.advance(time.Second)
		ca.reserveID(second)
	}},
	{"APolicySetOnOneGatewayActsOnTheOther", func(a, b *harness) {
		a.setPolicy(backend.Policy{Tube: "work", MaxReserves: 1, Unique: true})
		got, err := b.b.Policy(b.ctx(), "work")
		require.NoError(b, err)
		require.Equal(b, backend.Policy{Tube: "work", MaxReserves: 1, Unique: true}, got)
		ca, cb := a.worker("work"), b.worker("work")
		id := ca.put(job{body: "same"})
		require.Equal(b, id, cb.put(job{body: "same"}))
		cb.reserveID(id)
		require.ErrorIs(b, cb.release(id, 0, 0), backend.ErrBuried)
		a.requireState(id, backend.Buried)
	}},
}
