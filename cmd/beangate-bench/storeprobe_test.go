package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRedisInfo(t *testing.T) {
	const info = "# CPU\r\nused_cpu_sys:25.500000\r\nused_cpu_user:76.250000\r\n" +
		"used_cpu_sys_children:1.000000\r\nused_cpu_user_main_thread:75.9\r\n\r\n# Commandstats\r\n" +
		"cmdstat_fcall:calls=100,usec=5000,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_fcall_ro:calls=5,usec=50,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hset:calls=300,usec=300,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
	tests := []struct {
		name    string
		text    string
		want    storeSample
		wantErr bool
	}{
		{"cpu and commands", info, storeSample{cpu: 101750 * time.Millisecond, commands: 405, fcalls: 105, walBytes: -1, commits: -1, fsyncs: -1}, false},
		{"no commandstats", "used_cpu_sys:1\r\nused_cpu_user:2\r\n", storeSample{}, true},
		{"no cpu", "cmdstat_get:calls=1,usec=1\r\n", storeSample{}, true},
		{"bad calls", "used_cpu_sys:1\r\nused_cpu_user:2\r\ncmdstat_get:calls=x,usec=1\r\n", storeSample{}, true},
		{"no calls", "used_cpu_sys:1\r\nused_cpu_user:2\r\ncmdstat_get:usec=1\r\n", storeSample{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRedisInfo(tt.text)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestStoreMetricsPerJob(t *testing.T) {
	before := storeSample{cpu: time.Second, commands: 1000, fcalls: 100, walBytes: -1, commits: 10, fsyncs: 5}
	after := storeSample{cpu: time.Second + 50*time.Millisecond, commands: 3000, fcalls: 300, walBytes: -1, commits: 510, fsyncs: 255}
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
