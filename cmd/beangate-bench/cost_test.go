package main

import (
	"math"
	"strconv"
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

func TestMasterMetrics(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name           string
		before, after  map[string]time.Duration
		jobs           int64
		want           map[string]float64 // by name; NaN compared as NaN
		wantNone       bool
		wantShareOrder []float64
	}{
		{
			name:   "one server: all of it on one master",
			before: map[string]time.Duration{"a": 10 * ms}, after: map[string]time.Duration{"a": 60 * ms}, jobs: 1000,
			want: map[string]float64{
				"Redis main thread CPU per job, all masters":    50,
				"Redis main thread CPU per job, busiest master": 50,
				"fleet ceiling, 1 core ÷ busiest master":        20000,
			},
			wantShareOrder: []float64{100},
		},
		{
			name:   "three masters, the busiest caps the fleet",
			before: map[string]time.Duration{"a": 0, "b": 5 * ms, "c": 0},
			after:  map[string]time.Duration{"a": 10 * ms, "b": 45 * ms, "c": 10 * ms}, jobs: 1000,
			want: map[string]float64{
				"Redis main thread CPU per job, all masters":    60,
				"Redis main thread CPU per job, busiest master": 40,
				"fleet ceiling, 1 core ÷ busiest master":        25000,
			},
			wantShareOrder: []float64{100 * 40.0 / 60, 100 * 10.0 / 60, 100 * 10.0 / 60},
		},
		{name: "no jobs", before: map[string]time.Duration{"a": 0}, after: map[string]time.Duration{"a": ms}, jobs: 0, wantNone: true},
		{name: "not Redis", jobs: 10, wantNone: true},
		{name: "a master came or went", before: map[string]time.Duration{"a": 0}, after: map[string]time.Duration{"b": ms}, jobs: 10, wantNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := masterMetrics(tt.before, tt.after, tt.jobs)
			if tt.wantNone {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 3+len(tt.wantShareOrder))
			for _, m := range got[:3] {
				require.InDelta(t, tt.want[m.Name], m.Value, 1e-6, m.Name)
			}
			for i, share := range tt.wantShareOrder {
				require.Equal(t, "master #"+strconv.Itoa(i+1)+" share of main thread CPU", got[3+i].Name)
				require.InDelta(t, share, got[3+i].Value, 1e-6)
			}
		})
	}
}
