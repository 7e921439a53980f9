package batch

// sizes is a Batcher's record of its recent batch sizes, which decides whether a batch may go
// out beside others in flight (see the package doc). Guarded by Batcher.mu; the zero value is
// ready.
type sizes struct {
	avg int // calls per batch lately, a moving average in 1024ths
}

// fewCalls is the moving average (in 1024ths) below which batches count as single calls.
const fewCalls = 1536

// sent records a batch of n calls.
func (s *sizes) sent(n int) {
	if n > 0 {
		s.avg += (n<<10 - s.avg) >> 3
	}
}

// mayAdd reports whether a batch of the queued calls may go out now, while inFlight batches
// carrying flying calls are out, with at most max in flight: always when none is; beside
// others only for a single call, when each batch in flight carries a single call and batches
// lately have too.
func (s *sizes) mayAdd(inFlight, flying, queued, max int) bool {
	if inFlight == 0 {
		return true
	}
	return inFlight < max && s.avg < fewCalls && flying == inFlight && queued == 1
}
