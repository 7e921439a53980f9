package memory

import (
	"context"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

var testEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

func benchBackend(b *testing.B) *Backend {
	be := New(Options{Clock: clocktest.NewFake(testEpoch)})
	b.Cleanup(func() { _ = be.Close() })
	if err := be.BeginSession(context.Background(), "bench.1", backend.SessionInfo{}); err != nil {
		b.Fatal(err)
	}
	return be
}

var benchBody = make([]byte, 100)

func BenchmarkPut(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	p := backend.PutParams{Tube: backend.DefaultTube, Priority: 1024, TTR: time.Minute, Body: benchBody}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Put(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutReserveDelete is one job's whole life on the hot path.
func BenchmarkPutReserveDelete(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	p := backend.PutParams{Tube: backend.DefaultTube, Priority: 1024, TTR: time.Minute, Body: benchBody}
	r := backend.ReserveParams{Session: "bench.1", Tubes: []string{backend.DefaultTube}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Put(ctx, p); err != nil {
			b.Fatal(err)
		}
		j, err := be.Reserve(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if err := be.Delete(ctx, "bench.1", j.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReserveDeleteFromDeepQueue reserves from a tube holding many ready jobs.
func BenchmarkReserveDeleteFromDeepQueue(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	p := backend.PutParams{Tube: backend.DefaultTube, TTR: time.Minute, Body: benchBody}
	for i := range 100_000 {
		p.Priority = uint32(i % 1000)
		if _, err := be.Put(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	r := backend.ReserveParams{Session: "bench.1", Tubes: []string{backend.DefaultTube}}
	b.ReportAllocs()
	for b.Loop() {
		j, err := be.Reserve(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if err := be.Delete(ctx, "bench.1", j.ID); err != nil {
			b.Fatal(err)
		}
		if _, err := be.Put(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParallelPutReserveDelete runs the hot path from many goroutines, one session each.
func BenchmarkParallelPutReserveDelete(b *testing.B) {
	be := benchBackend(b)
	ctx := context.Background()
	var n int64
	var mu = make(chan struct{}, 1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		mu <- struct{}{}
		n++
		sid := backend.SessionID("par." + string(rune('a'+n%26)) + time.Duration(n).String())
		<-mu
		if err := be.BeginSession(ctx, sid, backend.SessionInfo{}); err != nil {
			b.Error(err)
			return
		}
		p := backend.PutParams{Tube: backend.DefaultTube, TTR: time.Minute, Body: benchBody}
		r := backend.ReserveParams{Session: sid, Tubes: []string{backend.DefaultTube}}
		for pb.Next() {
			if _, err := be.Put(ctx, p); err != nil {
				b.Error(err)
				return
			}
			j, err := be.Reserve(ctx, r)
			if err != nil {
				continue // another goroutine took it; its own put will serve us later
			}
			if err := be.Delete(ctx, sid, j.ID); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
