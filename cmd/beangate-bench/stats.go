package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted samples, so the
// value is always one that was observed; NaN when there are none.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	// p*n/100 in floating point can land a hair above a whole rank (99.9% of 1000 gives
	// 999.0000000000001); the tolerance keeps such a rank whole instead of taking the next sample.
	rank := int(math.Ceil(p*float64(len(sorted))/100 - 1e-9))
	rank = min(max(rank, 1), len(sorted))
	return float64(sorted[rank-1])
}

// spread is one metric across rounds.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// summarize returns the median (mean of the middle two for an even count), min and max,
// ignoring NaN rounds; all NaN when no round produced the metric.
func summarize(values []float64) spread {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return spread{math.NaN(), math.NaN(), math.NaN()}
	}
	slices.Sort(v)
	mid := len(v) / 2
	median := v[mid]
	if len(v)%2 == 0 {
		median = (v[mid-1] + v[mid]) / 2
	}
	return spread{Median: median, Min: v[0], Max: v[len(v)-1]}
}

// ratio is x relative to the baseline server; NaN when either side is missing or the base is 0.
func ratio(x, base float64) float64 {
	if math.IsNaN(x) || math.IsNaN(base) || base == 0 {
		return math.NaN()
	}
	return x / base
}
