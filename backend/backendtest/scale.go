package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// MeasureListingAndFlush logs how fast a store holding jobs ready jobs in tube (filled by the
// caller, directly in the store) lists and flushes: the time to list a page of 100 from
// the middle, then the longest single call of a flush by MaxBulkLimit and its total. maxCalls
// bounds the flush (0: until the tube is empty).
func MeasureListingAndFlush(t *testing.T, b backend.Backend, tube string, jobs, maxCalls int) {
	t.Helper()
	ctx := context.Background()
	lister, ok := b.(backend.JobLister)
	require.True(t, ok, "the store lists jobs")
	editor, ok := b.(backend.BulkEditor)
	require.True(t, ok, "the store edits in bulk")

	page, err := lister.ListJobs(ctx, backend.ListParams{Tube: tube, State: backend.Ready, Limit: 1000})
	require.NoError(t, err)
	for range jobs / 2000 { // to the middle
		page, err = lister.ListJobs(ctx, backend.ListParams{Tube: tube, State: backend.Ready, After: page.Next, Limit: 1000})
		require.NoError(t, err)
	}
	const rounds = 200
	start := time.Now()
	for range rounds {
		p, err := lister.ListJobs(ctx, backend.ListParams{Tube: tube, State: backend.Ready, After: page.Next, Limit: 100, BodyBytes: 256})
		require.NoError(t, err)
		require.Len(t, p.Jobs, 100)
	}
	t.Logf("a page of 100 from the middle of %d jobs: %v", jobs, time.Since(start)/rounds)

	var longest time.Duration
	deleted, calls := 0, 0
	start = time.Now()
	for maxCalls == 0 || calls < maxCalls {
		t0 := time.Now()
		n, err := editor.DeleteJobs(ctx, tube, backend.Ready, backend.MaxBulkLimit)
		longest = max(longest, time.Since(t0))
		require.NoError(t, err)
		deleted += n
		calls++
		if n == 0 {
			break
		}
	}
	t.Logf("flushed %d jobs in %d calls in %v, the longest call %v", deleted, calls, time.Since(start), longest)
}
