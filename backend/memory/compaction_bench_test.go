package memory

import (
	"context"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// BenchmarkCompactionLatency1M: with 1M live jobs in a binlog (-f 50), one client puts and
// deletes jobs of 100 bytes, first until compaction starts, then until it has moved every live
// job at least once (or 50 s pass), and reports its longest call in each phase: how long
// compaction, file changes, fsyncs and the collector make a command wait. The target is no
// pause over a few milliseconds.
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
		churn := backend.PutParams{Tube: "churn", TTR: time.Minute, Body: benchBody}
		var before, during phase
		deadline := time.Now().Add(50 * time.Second)
		for p := &before; time.Now().Before(deadline); {
			for range 1000 {
				start := time.Now()
				id, err := be.Put(ctx, churn)
				if err == nil {
					err = be.Delete(ctx, "bench", id)
				}
				if err != nil {
					b.Fatal(err)
				}
				p.note(time.Since(start))
			}
			st, err := be.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if st.Binlog.RecordsMigrated > 0 {
				p = &during
			}
			if st.Binlog.RecordsMigrated >= 1_000_000 {
				break
			}
		}
		st, _ := be.Stats(ctx)
		before.report(b, "before")
		during.report(b, "during")
		b.ReportMetric(float64(st.Binlog.RecordsMigrated), "migrated")
		_ = be.Close()
	}
}

// phase is the put+delete latencies of one phase.
type phase struct {
	ops, over1ms, over5ms int
	longest               time.Duration
}

func (p *phase) note(took time.Duration) {
	p.ops++
	p.longest = max(p.longest, took)
	if took > time.Millisecond {
		p.over1ms++
	}
	if took > 5*time.Millisecond {
		p.over5ms++
	}
}

func (p *phase) report(b *testing.B, name string) {
	b.ReportMetric(float64(p.ops), name+"-ops")
	b.ReportMetric(float64(p.longest.Microseconds()), name+"-µs-longest")
	b.ReportMetric(float64(p.over1ms), name+"-over-1ms")
	b.ReportMetric(float64(p.over5ms), name+"-over-5ms")
}

// BenchmarkPutDeleteWithBinlog: one put and one delete of a 100-byte job with a binlog (-F);
// its allocations per operation pace the collector, whose assists are what a command waits for
// at 1M jobs.
func BenchmarkPutDeleteWithBinlog(b *testing.B) {
	ctx := context.Background()
	be, err := Open(Options{Binlog: &binlog.Options{Dir: b.TempDir(), NoSync: true}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	p := backend.PutParams{Tube: backend.DefaultTube, TTR: time.Minute, Body: benchBody}
	b.ReportAllocs()
	for b.Loop() {
		id, err := be.Put(ctx, p)
		if err == nil {
			err = be.Delete(ctx, "bench", id)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
