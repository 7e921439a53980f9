package main

import "time"

// keptUpShare is the share of the offered rate a server must achieve to count as keeping up:
// an open-loop round's edges cost a few jobs even to a server that is never behind.
const keptUpShare = 0.99

// latencyPoint is one reported point of a latency distribution.
type latencyPoint struct {
	name string
	pct  float64
}

var (
	// plannedLatencyPoints describe the headline latency, the tail up to the worst job included.
	plannedLatencyPoints = []latencyPoint{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p999", 99.9}, {"max", 100}}
	// sentLatencyPoints and sendLagPoints are there to tell the harness's lateness apart, and
	// the put's acknowledgement (sent→inserted) from the delivery after it.
	sentLatencyPoints = []latencyPoint{{"p50", 50}, {"p99", 99}}
	sendLagPoints     = []latencyPoint{{"p99", 99}, {"max", 100}}
)

// openLoopResult is what one open-loop round counted and sampled.
type openLoopResult struct {
	offered  int           // jobs per second the schedule offered
	deleted  int64         // jobs deleted inside the measured window
	window   time.Duration // the measured window as it actually ran
	fromDue  []time.Duration
	fromSent []time.Duration
	sendLag  []time.Duration
	inserted []time.Duration // INSERTED received minus the put's send time
	delivery []time.Duration // RESERVED received minus INSERTED received (0 if before)
}

// metrics gives the round's figures; the latency samples must be sorted.
func (o openLoopResult) metrics() []metric {
	achieved := float64(o.deleted) / o.window.Seconds()
	keptUp := 0.0
	if achieved >= keptUpShare*float64(o.offered) {
		keptUp = 1
	}
	out := []metric{
		{Name: "achieved", Unit: "jobs/s", Value: achieved},
		{Name: "offered", Unit: "jobs/s", Value: float64(o.offered)},
		{Name: "kept up", Unit: "1 = achieved ≥ 99% of offered", Value: keptUp},
	}
	out = append(out, latencyPointMetrics("planned→reserved", o.fromDue, plannedLatencyPoints)...)
	out = append(out, latencyPointMetrics("sent→reserved", o.fromSent, sentLatencyPoints)...)
	out = append(out, latencyPointMetrics("sent→inserted", o.inserted, sentLatencyPoints)...)
	out = append(out, latencyPointMetrics("inserted→reserved", o.delivery, sentLatencyPoints)...)
	return append(out, latencyPointMetrics("send lag", o.sendLag, sendLagPoints)...)
}

// latencyPointMetrics gives the points of sorted samples in microseconds, named what+" p50".
func latencyPointMetrics(what string, sorted []time.Duration, points []latencyPoint) []metric {
	out := make([]metric, 0, len(points))
	for _, p := range points {
		out = append(out, metric{Name: what + " " + p.name, Unit: "µs",
			Value: percentile(sorted, p.pct) / float64(time.Microsecond), Lower: true})
	}
	return out
}
