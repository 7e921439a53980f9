package ops

// Histogram buckets, in seconds.
var (
	// commandBuckets: from an in-memory command (tens of µs) to a slow store call.
	commandBuckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// queueBuckets: how long jobs and workers wait: milliseconds to an hour.
	queueBuckets = []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600}
)
