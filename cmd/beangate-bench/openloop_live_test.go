package main

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"

	"github.com/stretchr/testify/require"
)

// A short open-loop round at a rate any server keeps up with, against beangate's memory backend
// served in this process: achieved matches offered, every job is put, reserved and deleted
// exactly once, and the latency points are ordered and far below the gap between jobs.
func TestOpenLoopKeepsUpWithALowRateOnMemory(t *testing.T) {
	b := memory.New(memory.Options{})
	t.Cleanup(func() { _ = b.Close() })
	addr, _ := gatewaytest.StartServer(t, b, gateway.Config{})
	opts := options{Conns: 8, Body: 100, Tubes: 1, Duration: time.Second, Rate: 200, Producers: 4,
		Warmup: 200 * time.Millisecond}
	r := newRound(opts, target{Name: "beangate-memory", Addr: addr}, &serverState{})

	metrics, err := runRound(scenarios["open-loop"], r, true)

	require.NoError(t, err)
	got := map[string]float64{}
	for _, m := range metrics {
		got[m.Name] = m.Value
	}
	require.InDelta(t, 200, got["achieved"], 10, "achieved ≈ offered")
	require.Equal(t, 200.0, got["offered"])
	require.Equal(t, 1.0, got["kept up"])
	planned := []float64{got["planned→reserved p50"], got["planned→reserved p90"], got["planned→reserved p99"],
		got["planned→reserved p999"], got["planned→reserved max"]}
	require.Positive(t, planned[0])
	require.IsNonDecreasing(t, planned)
	require.Less(t, planned[2], float64(100*time.Millisecond/time.Microsecond), "p99 in µs")
	require.LessOrEqual(t, got["sent→reserved p50"], got["planned→reserved p50"], "a put is never sent before it is due")
	require.GreaterOrEqual(t, got["send lag p99"], 0.0)
	plan := newSchedule(time.Time{}, opts.Rate, opts.Producers, opts.Warmup+opts.Duration)
	require.Equal(t, int64(plan.jobs), r.ledger.inserted.Load(), "every planned job was put")
	require.Equal(t, int64(plan.jobs), r.ledger.deleted.Load(), "and deleted")
}
