package main

import "time"

// schedule is an open-loop plan: job i of a round is due at start + i/rate whatever became of
// the jobs before it, so a slow server cannot slow the offered load down (no coordinated
// omission). Producer p of n sends jobs p, p+n, p+2n, …: together they offer the rate, each
// its share.
type schedule struct {
	start     time.Time
	rate      int // jobs per second over all producers
	producers int
	jobs      int // jobs in the whole plan
}

// newSchedule plans every job due in [start, start+span).
func newSchedule(start time.Time, rate, producers int, span time.Duration) schedule {
	s := schedule{start: start, rate: rate, producers: producers}
	s.jobs = s.jobsWithin(span)
	return s
}

// due is job i's planned send time.
func (s schedule) due(i int) time.Time {
	return s.start.Add(time.Duration(i) * time.Second / time.Duration(s.rate))
}

// jobsWithin counts the jobs due in [start, start+d): the smallest i with due(i) >= start+d.
func (s schedule) jobsWithin(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	perSecond := int64(time.Second)
	return int((int64(d)*int64(s.rate) + perSecond - 1) / perSecond)
}

// share is how many of the plan's jobs producer p sends.
func (s schedule) share(p int) int {
	if p >= s.jobs {
		return 0
	}
	return (s.jobs - p + s.producers - 1) / s.producers
}
