package main

import "time"

// metric is one figure measured in one round.
type metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Lower marks metrics where smaller is better (latency, memory), for readers of the table.
	Lower bool `json:"lower_is_better"`
}

func throughput(jobs int64, elapsed time.Duration) metric {
	return metric{Name: "throughput", Unit: "jobs/s", Value: float64(jobs) / elapsed.Seconds()}
}

// latencyMetrics gives p50, p99 and p999 of sorted samples in microseconds, named what+" p50".
func latencyMetrics(what string, sorted []time.Duration) []metric {
	out := make([]metric, 0, 3)
	for _, p := range []struct {
		name string
		pct  float64
	}{{"p50", 50}, {"p99", 99}, {"p999", 99.9}} {
		out = append(out, metric{Name: what + " " + p.name, Unit: "µs",
			Value: percentile(sorted, p.pct) / float64(time.Microsecond), Lower: true})
	}
	return out
}
