package memory

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
)

// BenchmarkPolicyCost is BenchmarkPutReserveDelete under each policy (bodies distinct, so that
// unique looks every put up and finds nothing): the cost per job a policy adds.
func BenchmarkPolicyCost(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    *backend.Policy
	}{
		{"none", nil},
		{"max-reserves", &backend.Policy{MaxReserves: 5}},
		{"expire-after", &backend.Policy{ExpireAfter: time.Hour}},
		{"max-reserved", &backend.Policy{MaxReserved: 1000}},
		{"rate", &backend.Policy{Rate: 1e9, Burst: 1000}},
		{"unique", &backend.Policy{Unique: true}},
		{"history", &backend.Policy{History: true}},
		{"all", &backend.Policy{MaxReserves: 5, ExpireAfter: time.Hour, MaxReserved: 1000, Rate: 1e9, Burst: 1000, Unique: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			be := New(Options{}) // the system clock: a rate's tokens accrue as the loop runs
			b.Cleanup(func() { _ = be.Close() })
			ctx := context.Background()
			if err := be.BeginSession(ctx, "bench.1", backend.SessionInfo{}); err != nil {
				b.Fatal(err)
			}
			if bc.p != nil {
				p := *bc.p
				p.Tube = "*"
				if err := be.SetPolicy(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			body := make([]byte, 100)
			r := backend.ReserveParams{Session: "bench.1", Tubes: []string{backend.DefaultTube}}
			var n uint64
			b.ReportAllocs()
			for b.Loop() {
				n++
				binary.LittleEndian.PutUint64(body, n)
				p := backend.PutParams{Tube: backend.DefaultTube, Priority: 1024, TTR: time.Minute, Body: append([]byte(nil), body...)}
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
		})
	}
}

// BenchmarkRetryDelayCost is a job put, reserved, released with delay 0 and deleted: requeued
// ready with no policy, backed off to delayed under retry-delay (a policy with another limit
// only, max-reserves, shows what the lookup of the tube's policy alone costs).
func BenchmarkRetryDelayCost(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    *backend.Policy
	}{
		{"none", nil},
		{"max-reserves", &backend.Policy{MaxReserves: 5}},
		{"retry-delay", &backend.Policy{RetryDelay: time.Second, RetryDelayMax: time.Minute}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			be := New(Options{})
			b.Cleanup(func() { _ = be.Close() })
			ctx := context.Background()
			if err := be.BeginSession(ctx, "bench.1", backend.SessionInfo{}); err != nil {
				b.Fatal(err)
			}
			if bc.p != nil {
				p := *bc.p
				p.Tube = "*"
				if err := be.SetPolicy(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			body := make([]byte, 100)
			r := backend.ReserveParams{Session: "bench.1", Tubes: []string{backend.DefaultTube}}
			b.ReportAllocs()
			for b.Loop() {
				p := backend.PutParams{Tube: backend.DefaultTube, Priority: 1024, TTR: time.Minute, Body: append([]byte(nil), body...)}
				if _, err := be.Put(ctx, p); err != nil {
					b.Fatal(err)
				}
				j, err := be.Reserve(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				if err := be.Release(ctx, backend.ReleaseParams{Session: "bench.1", ID: j.ID, Priority: 1024}); err != nil {
					b.Fatal(err)
				}
				if err := be.Delete(ctx, "bench.1", j.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
