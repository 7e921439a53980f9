package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScheduleCountsTheJobsDueInASpan(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name string
		rate int
		span time.Duration
		want int
	}{
		{"whole seconds", 2000, 10 * time.Second, 20000},
		{"a job due exactly at the end is not in the span", 200, time.Second, 200},
		{"a span shorter than the gap holds the job at start", 10, time.Millisecond, 1},
		{"part of a gap counts the job that starts it", 3, 1500 * time.Millisecond, 5},
		{"nothing", 2000, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(start, tt.rate, 4, tt.span)
			require.Equal(t, tt.want, s.jobs)
			if s.jobs > 0 {
				require.Less(t, s.due(s.jobs-1).Sub(start), tt.span, "the last job is due inside the span")
			}
			require.GreaterOrEqual(t, s.due(s.jobs).Sub(start), tt.span, "the next one is not")
		})
	}
}

func TestScheduleDueTimesIgnoreEverythingButTheRate(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name string
		rate int
		i    int
		want time.Duration
	}{
		{"first job at start", 2000, 0, 0},
		{"2000/s: 0.5 ms apart", 2000, 1, 500 * time.Microsecond},
		{"2000/s: job 20000 at 10 s", 2000, 20000, 10 * time.Second},
		{"3/s rounds down to the nanosecond", 3, 1, 333333333},
		{"3/s: job 3 exactly at 1 s", 3, 3, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(start, tt.rate, 4, time.Minute)
			require.Equal(t, tt.want, s.due(tt.i).Sub(start))
		})
	}
}

// Producers' shares interleave: together they send every job of the plan exactly once.
func TestScheduleSharesCoverEveryJobOnce(t *testing.T) {
	tests := []struct {
		name      string
		rate      int
		producers int
		span      time.Duration
		wantShare []int
	}{
		{"even split", 2000, 4, time.Second, []int{500, 500, 500, 500}},
		{"the first producers take the remainder", 10, 4, time.Second, []int{3, 3, 2, 2}},
		{"more producers than jobs", 2, 4, time.Second, []int{1, 1, 0, 0}},
		{"one producer", 200, 1, time.Second, []int{200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(time.Unix(1000, 0), tt.rate, tt.producers, tt.span)
			seen := make([]int, s.jobs)
			for p := range tt.producers {
				require.Equal(t, tt.wantShare[p], s.share(p), "producer %d", p)
				n := 0
				for i := p; i < s.jobs; i += s.producers {
					seen[i]++
					n++
				}
				require.Equal(t, s.share(p), n, "producer %d sends its share", p)
			}
			for i, n := range seen {
				require.Equal(t, 1, n, "job %d", i)
			}
		})
	}
}

func TestOpenLoopMetrics(t *testing.T) {
	thousand := make([]time.Duration, 1000)
	for i := range thousand {
		thousand[i] = time.Duration(i+1) * time.Microsecond
	}
	tests := []struct {
		name       string
		res        openLoopResult
		want       map[string]float64
		wantKeptUp float64
	}{
		{"kept up exactly", openLoopResult{offered: 2000, deleted: 20000, window: 10 * time.Second,
			fromDue: thousand, fromSent: thousand, sendLag: thousand, inserted: thousand[:100], delivery: thousand[:10]},
			map[string]float64{"achieved": 2000, "offered": 2000, "planned→reserved p50": 500,
				"planned→reserved p90": 900, "planned→reserved p99": 990, "planned→reserved p999": 999,
				"planned→reserved max": 1000, "sent→reserved p50": 500, "sent→reserved p99": 990,
				"send lag p99": 990, "send lag max": 1000, "sent→inserted p50": 50, "sent→inserted p99": 99,
				"inserted→reserved p50": 5, "inserted→reserved p99": 10}, 1},
		{"99% of offered still keeps up", openLoopResult{offered: 2000, deleted: 19800, window: 10 * time.Second},
			map[string]float64{"achieved": 1980}, 1},
		{"just under 99% falls behind", openLoopResult{offered: 2000, deleted: 19799, window: 10 * time.Second},
			map[string]float64{"achieved": 1979.9}, 0},
		{"a longer window than planned is divided by what ran", openLoopResult{offered: 200, deleted: 202, window: 1010 * time.Millisecond},
			map[string]float64{"achieved": 200}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]float64{}
			for _, m := range tt.res.metrics() {
				got[m.Name] = m.Value
				require.Equal(t, m.Unit == "µs", m.Lower, "%s: latencies, and only they, are lower-is-better", m.Name)
			}
			require.Equal(t, tt.wantKeptUp, got["kept up"])
			for name, want := range tt.want {
				require.InDelta(t, want, got[name], 1e-9, name)
			}
		})
	}
}

func TestOpenLoopMetricsWithoutSamplesAreUnmeasured(t *testing.T) {
	metrics := openLoopResult{offered: 2000, deleted: 0, window: time.Second}.metrics()
	for _, m := range metrics {
		if m.Unit == "µs" {
			require.True(t, math.IsNaN(m.Value), m.Name)
		}
	}
	require.Equal(t, "achieved", metrics[0].Name, "the progress line shows the first metric")
}

func TestOpenLoopFlags(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		wantErr      bool
		wantDuration time.Duration
	}{
		{"open-loop measures 10 s by default", []string{"-scenario", "open-loop"}, false, 10 * time.Second},
		{"a given duration wins", []string{"-scenario", "open-loop", "-duration", "3s"}, false, 3 * time.Second},
		{"other scenarios keep 5 s", []string{"-scenario", "cycle"}, false, 5 * time.Second},
		{"zero rate", []string{"-scenario", "open-loop", "-rate", "0"}, true, 0},
		{"absurd rate", []string{"-scenario", "open-loop", "-rate", "2000000"}, true, 0},
		{"no producers", []string{"-scenario", "open-loop", "-producers", "0"}, true, 0},
		{"negative warm-up", []string{"-scenario", "open-loop", "-warmup", "-1s"}, true, 0},
		{"negative handler", []string{"-scenario", "open-loop", "-handler", "-1ms"}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(append([]string{"-servers", "a=h:1"}, tt.args...), discard{})
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantDuration, cfg.opts.Duration)
			if tt.args[1] == "open-loop" {
				require.Equal(t, 2000, cfg.opts.Rate)
				require.Equal(t, 4, cfg.opts.Producers)
				require.Equal(t, 16, cfg.opts.Conns, "workers")
			}
		})
	}
}
