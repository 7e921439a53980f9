package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
)

// BenchmarkHistoryCost is a put, reserve and delete per job (100-byte bodies) without any
// policy, under a policy that sets a limit (max-reserves, the policy statements' own cost), and
// under one that keeps jobs' histories: the WAL each job writes (pg_current_wal_lsn before and
// after; the database's, so other clients' writes count too: compare runs on a quiet server)
// and the time per job, with round trips.
func BenchmarkHistoryCost(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    *backend.Policy
	}{
		{"none", nil},
		{"max-reserves", &backend.Policy{MaxReserves: 1000}},
		{"history", &backend.Policy{History: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			be := newTestBackend(b, nil, testSchema(b))
			const s = backend.SessionID("bench.1")
			if err := be.BeginSession(ctx, s, backend.SessionInfo{Addr: "127.0.0.1:40000"}); err != nil {
				b.Fatal(err)
			}
			if bc.p != nil {
				p := *bc.p
				p.Tube = "*"
				if err := be.SetPolicy(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			r := backend.ReserveParams{Session: s, Tubes: []string{backend.DefaultTube}}
			cycle := func() {
				id, err := be.Put(ctx, backend.PutParams{Session: s, Tube: backend.DefaultTube, Priority: 1024,
					TTR: time.Minute, Body: make([]byte, 100)})
				if err != nil {
					b.Fatal(err)
				}
				j, err := be.Reserve(ctx, r)
				if err != nil || j.ID != id {
					b.Fatalf("reserve: %v, %v", j, err)
				}
				if err := be.Delete(ctx, s, id); err != nil {
					b.Fatal(err)
				}
			}
			for range 50 { // warm-up: plans, the policy cache
				cycle()
			}
			lsn := func() string {
				var l string
				if err := admin(b).QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&l); err != nil {
					b.Fatal(err)
				}
				return l
			}
			before := lsn()
			n := 0
			b.ResetTimer()
			for b.Loop() {
				cycle()
				n++
			}
			b.StopTimer()
			var wal float64
			if err := admin(b).QueryRow(ctx, "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8", lsn(), before).Scan(&wal); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(wal/float64(n), "wal-bytes/job")
		})
	}
}
