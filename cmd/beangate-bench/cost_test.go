package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/internal/storeprobe"
)

func TestStoreMetricsPerJob(t *testing.T) {
	before := storeprobe.Sample{CPU: time.Second, Commands: 1000, FCalls: 100, WALBytes: -1, Commits: 10, Fsyncs: 5}
	after := storeprobe.Sample{CPU: time.Second + 50*time.Millisecond, Commands: 3000, FCalls: 300, WALBytes: -1, Commits: 510, Fsyncs: 255}
	m := storeMetrics(before, after, 1000)
	require.Equal(t, "store CPU per job", m[0].Name)
	require.InDelta(t, 50.0, m[0].Value, 1e-9) // 50 ms over 1000 jobs = 50 µs
	require.InDelta(t, 2.0, m[1].Value, 1e-9)
	require.InDelta(t, 0.2, m[2].Value, 1e-9)
	require.True(t, math.IsNaN(m[3].Value), "a figure the store does not give is NaN")
	require.InDelta(t, 0.5, m[4].Value, 1e-9)
	require.InDelta(t, 0.25, m[5].Value, 1e-9)
	require.True(t, math.IsNaN(storeMetrics(before, after, 0)[0].Value), "no jobs: nothing per job")
}
