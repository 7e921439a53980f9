package memory

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
)

// millionJobs fills a backend with 1M ready jobs of mixed priorities in one tube.
func millionJobs(b *testing.B) *Backend {
	be := benchBackend(b)
	ctx := context.Background()
	for i := range 1_000_000 {
		p := backend.PutParams{Tube: "big", Priority: uint32(rand.IntN(100)), TTR: time.Minute, Body: benchBody}
		if _, err := be.Put(ctx, p); err != nil {
			b.Fatal(i, err)
		}
	}
	return be
}

// BenchmarkListPageOf100From1M lists pages of 100 from the middle of a 1M-job tube (a cursor
// half-way through): the console's tube page and `ctl list`.
func BenchmarkListPageOf100From1M(b *testing.B) {
	be := millionJobs(b)
	ctx := context.Background()
	page, err := be.ListJobs(ctx, backend.ListParams{Tube: "big", State: backend.Ready, Limit: backend.MaxListLimit})
	if err != nil {
		b.Fatal(err)
	}
	for range 500 { // walk to the middle
		if page, err = be.ListJobs(ctx, backend.ListParams{Tube: "big", State: backend.Ready, After: page.Next, Limit: backend.MaxListLimit}); err != nil {
			b.Fatal(err)
		}
	}
	mid := page.Next
	b.ResetTimer()
	for b.Loop() {
		if _, err := be.ListJobs(ctx, backend.ListParams{Tube: "big", State: backend.Ready, After: mid, Limit: 100, BodyBytes: 256}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFlush1M deletes a 1M-job tube in calls of MaxBulkLimit and reports the longest call:
// how long the store's lock is held at a time while other clients wait.
func BenchmarkFlush1M(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		be := millionJobs(b)
		b.StartTimer()
		var longest time.Duration
		for {
			start := time.Now()
			n, err := be.DeleteJobs(context.Background(), "big", backend.Ready, backend.MaxBulkLimit)
			longest = max(longest, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		b.ReportMetric(float64(longest.Microseconds()), "µs-longest-call")
	}
}
