package main

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentileIsNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	thousand := make([]time.Duration, 1000)
	for i := range thousand {
		thousand[i] = time.Duration(i + 1)
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    float64
	}{
		{"median of 1..100", hundred, 50, 50},
		{"p99 of 1..100", hundred, 99, 99},
		{"p999 of 1..100 is the largest", hundred, 99.9, 100},
		{"p999 of 1..1000 is the 999th, not pushed up by rounding", thousand, 99.9, 999},
		{"p99 of 1..1000", thousand, 99, 990},
		{"p100 is the largest", hundred, 100, 100},
		{"tiny p is the smallest", hundred, 0.001, 1},
		{"single sample", []time.Duration{7}, 99.9, 7},
		{"median of an even count is the lower middle", []time.Duration{1, 2, 3, 4}, 50, 2},
		{"negative samples (early delayed jobs) are kept", []time.Duration{-3, -1, 2}, 50, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, percentile(tt.samples, tt.p))
		})
	}
}

func TestPercentileOfNothingIsNaN(t *testing.T) {
	require.True(t, math.IsNaN(percentile(nil, 50)))
}

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		values []float64
		want   spread
	}{
		{"odd count", []float64{3, 1, 2}, spread{Median: 2, Min: 1, Max: 3}},
		{"even count averages the middle two", []float64{4, 1, 3, 2}, spread{Median: 2.5, Min: 1, Max: 4}},
		{"one round", []float64{5}, spread{Median: 5, Min: 5, Max: 5}},
		{"unmeasured rounds are skipped", []float64{nan, 10, 20}, spread{Median: 15, Min: 10, Max: 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, summarize(tt.values))
		})
	}
}

func TestSummarizeOfNothingIsNaN(t *testing.T) {
	s := summarize([]float64{math.NaN()})
	require.True(t, math.IsNaN(s.Median) && math.IsNaN(s.Min) && math.IsNaN(s.Max))
}

func TestRatio(t *testing.T) {
	tests := []struct {
		name    string
		x, base float64
		want    float64 // NaN means "not comparable"
	}{
		{"faster", 130, 100, 1.3},
		{"same", 100, 100, 1},
		{"zero base", 5, 0, math.NaN()},
		{"missing value", math.NaN(), 100, math.NaN()},
		{"missing base", 100, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ratio(tt.x, tt.base)
			if math.IsNaN(tt.want) {
				require.True(t, math.IsNaN(got))
				return
			}
			require.InDelta(t, tt.want, got, 1e-9)
		})
	}
}

func TestSummarizeServersRatiosAreToTheFirstServer(t *testing.T) {
	rounds := func(values ...float64) [][]metric {
		var out [][]metric
		for _, v := range values {
			out = append(out, []metric{{Name: "throughput", Unit: "jobs/s", Value: v}})
		}
		return out
	}
	servers := []serverResult{
		{Target: target{Name: "a"}, Rounds: rounds(100, 300, 200)},
		{Target: target{Name: "b"}, Rounds: rounds(260, 240, 250)},
	}
	summarizeServers(servers)
	require.Equal(t, spread{Median: 200, Min: 100, Max: 300}, servers[0].Summary[0].spread)
	require.Equal(t, spread{Median: 250, Min: 240, Max: 260}, servers[1].Summary[0].spread)
	require.InDelta(t, 1.0, servers[0].Summary[0].Ratio, 1e-9)
	require.InDelta(t, 1.25, servers[1].Summary[0].Ratio, 1e-9)
}

// Servers may report different metrics (a cluster one share per master, a round whose store
// could not be read none of the store's): rows are matched by name, never by position.
func TestSummarizeServersMatchesMetricsByName(t *testing.T) {
	m := func(name string, v float64) metric { return metric{Name: name, Unit: "x", Value: v} }
	servers := []serverResult{
		{Target: target{Name: "single"}, Rounds: [][]metric{
			{m("throughput", 100), m("master #1 share", 100)},
			{m("throughput", 100)},
		}},
		{Target: target{Name: "cluster"}, Rounds: [][]metric{
			{m("throughput", 200), m("master #1 share", 60), m("master #2 share", 40)},
			{m("extra", 1), m("throughput", 300), m("master #1 share", 80), m("master #2 share", 20)},
		}},
	}
	summarizeServers(servers)
	names := func(rows []summaryRow) (out []string) {
		for _, r := range rows {
			out = append(out, r.Name)
		}
		return out
	}
	require.Equal(t, []string{"throughput", "master #1 share"}, names(servers[0].Summary))
	require.Equal(t, []string{"throughput", "master #1 share", "master #2 share", "extra"}, names(servers[1].Summary))
	require.Equal(t, spread{Median: 100, Min: 100, Max: 100}, servers[0].Summary[1].spread, "a round without it does not count")
	require.InDelta(t, 2.5, servers[1].Summary[0].Ratio, 1e-9)
	require.InDelta(t, 0.7, servers[1].Summary[1].Ratio, 1e-9)
	require.True(t, math.IsNaN(servers[1].Summary[2].Ratio), "the first server has no master #2")

	var out bytes.Buffer
	require.NoError(t, writeTable(&out, &runResult{Scenario: "tubes", Servers: servers}))
	require.Contains(t, out.String(), "master #2 share (x)  cluster")
}
