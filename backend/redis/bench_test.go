package redis_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
)

// BenchmarkCycle runs put, reserve, delete from 16 sessions at once (the bench harness's
// `cycle` shape, without the protocol in between).
func BenchmarkCycle(b *testing.B) {
	be := newBackend(b, newPrefix(b), nil, time.Second)
	ctx := context.Background()
	var n atomic.Int64
	b.SetParallelism(8) // 16 goroutines on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		s := backend.SessionID(fmt.Sprintf("bench.%d", n.Add(1)))
		tube := string(s)
		if err := be.BeginSession(ctx, s, backend.SessionInfo{}); err != nil {
			b.Error(err)
			return
		}
		_ = be.WatchTube(ctx, s, tube)
		for pb.Next() {
			if _, err := be.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("x")}); err != nil {
				b.Error(err)
				return
			}
			j, err := be.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{tube}})
			if err != nil {
				b.Error(err)
				return
			}
			if err := be.Delete(ctx, s, j.ID); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCycleOneSession is the same from one session: one call at a time, so it measures a
// call's latency (round trip, script, the batcher's overhead) rather than coalescing.
func BenchmarkCycleOneSession(b *testing.B) {
	be := newBackend(b, newPrefix(b), nil, time.Second)
	ctx := context.Background()
	s := backend.SessionID("bench.1")
	if err := be.BeginSession(ctx, s, backend.SessionInfo{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := be.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")}); err != nil {
			b.Fatal(err)
		}
		j, err := be.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := be.Delete(ctx, s, j.ID); err != nil {
			b.Fatal(err)
		}
	}
}
