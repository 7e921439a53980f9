package memory

import (
	"context"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// BenchmarkCompactionLatency1M: with 1M live jobs in a binlog (-f 50), one client puts and
// deletes 4 KiB jobs until compaction has moved every live job at least once (or 50 s pass),
// and reports its longest call: how long compaction, file rotation and the collector ever make
// a command wait. Issue 15 asks for no pause over a few milliseconds.
func BenchmarkCompactionLatency1M(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		be, err := Open(Options{Binlog: &binlog.Options{Dir: b.TempDir(), SyncInterval: 50 * time.Millisecond}})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1_000_000 {
			if _, err := be.Put(ctx, backend.PutParams{Tube: "live", TTR: time.Minute, Body: benchBody}); err != nil {
				b.Fatal(i, err)
			}
		}
		b.StartTimer()
		churn := backend.PutParams{Tube: "churn", TTR: time.Minute, Body: make([]byte, 4096)}
		var longest time.Duration
		var ops, over1ms, over5ms int
		for deadline := time.Now().Add(50 * time.Second); time.Now().Before(deadline); {
			for range 1000 {
				start := time.Now()
				id, err := be.Put(ctx, churn)
				if err == nil {
					err = be.Delete(ctx, "bench", id)
				}
				took := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				longest = max(longest, took)
				ops++
				if took > time.Millisecond {
					over1ms++
				}
				if took > 5*time.Millisecond {
					over5ms++
				}
			}
			st, err := be.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if st.Binlog.RecordsMigrated >= 1_000_000 {
				break
			}
		}
		st, _ := be.Stats(ctx)
		b.ReportMetric(float64(longest.Microseconds()), "µs-longest-put+delete")
		b.ReportMetric(float64(ops), "put+delete")
		b.ReportMetric(float64(over1ms), "over-1ms")
		b.ReportMetric(float64(over5ms), "over-5ms")
		b.ReportMetric(float64(st.Binlog.RecordsMigrated), "migrated")
		_ = be.Close()
	}
}
