package main

import (
	"math"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// median of the values that are not NaN (the mean of the middle two for an even count); NaN
// when there are none.
func median(values []float64) float64 {
	v := slices.DeleteFunc(slices.Clone(values), math.IsNaN)
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// perJob is n per job; NaN when n is unknown (-1) or there were no jobs.
func perJob(n, jobs int64) float64 {
	if n < 0 || jobs <= 0 {
		return math.NaN()
	}
	return float64(n) / float64(jobs)
}

// figure prints a value with three significant digits, whole from 100 on; "-" for NaN.
func figure(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// selfCPU is this process's CPU so far, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
