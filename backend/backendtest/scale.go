package backendtest

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// scaleJobs is the tube's size in the stores' BenchmarkListingAndFlushAtScale.
var scaleJobs = flag.Int("scale.jobs", 1_000_000, "BenchmarkListingAndFlushAtScale: jobs in the tube")

// BenchmarkListingAndFlushAtScale measures a store holding -scale.jobs (1M) ready jobs in tube,
// put there by fill directly in the store (a million puts would take long), as sub-benchmarks:
//   - page: listing a page of 100 from the middle of the tube (the console's next page);
//   - flush-call: one call of a flush, MaxBulkLimit jobs from the front, and the longest such
//     call (longest-ms): a Redis serves nobody else during it. The calls empty the tube as
//     they go, so it must hold MaxBulkLimit jobs for each call b.N asks for.
func BenchmarkListingAndFlushAtScale(b *testing.B, store interface {
	ListJobs(ctx context.Context, p backend.ListParams) (*backend.JobPage, error)
	DeleteJobs(ctx context.Context, tube string, state backend.State, limit int) (int, error)
}, tube string, fill func(jobs int)) {
	jobs := *scaleJobs
	start := time.Now()
	fill(jobs)
	b.Logf("filled %d jobs in %v", jobs, time.Since(start))

	ctx := context.Background()
	page, err := store.ListJobs(ctx, backend.ListParams{Tube: tube, State: backend.Ready, Limit: 1000})
	require.NoError(b, err)
	for range jobs / 2000 { // to the middle
		page, err = store.ListJobs(ctx, backend.ListParams{Tube: tube, State: backend.Ready, After: page.Next, Limit: 1000})
		require.NoError(b, err)
	}
	middle := page.Next

	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			p, err := store.ListJobs(ctx, backend.ListParams{Tube: tube, State: backend.Ready, After: middle, Limit: 100, BodyBytes: 256})
			require.NoError(b, err)
			require.Len(b, p.Jobs, 100)
		}
	})
	b.Run("flush-call", func(b *testing.B) {
		var longest time.Duration
		for b.Loop() {
			start := time.Now()
			n, err := store.DeleteJobs(ctx, tube, backend.Ready, backend.MaxBulkLimit)
			longest = max(longest, time.Since(start))
			require.NoError(b, err)
			require.Equal(b, backend.MaxBulkLimit, n, "the tube ran short of jobs: a larger -scale.jobs")
		}
		b.ReportMetric(float64(longest)/float64(time.Millisecond), "longest-ms")
	})
}
