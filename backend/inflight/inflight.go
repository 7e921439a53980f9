// Package inflight decides when a store backend's batcher may send another batch while one is
// in flight (backend/redis; backend/postgres keeps one writer and one reserver: a second write
// batch gave 1.08× the jobs/s of a producer and a worker for 13 % more PostgreSQL CPU per job,
// docs/benchmarks-postgres.md).
//
// Why: a batcher sends the calls that queued while its batch was out as the next batch, one
// round trip for all of them; under load that is what keeps a store's cost per job down, and a
// second batch in flight would only split the calls over more round trips (Redis: +12 % CPU
// per job for 1.05× the jobs/s at 16 connections, docs/benchmarks.md). But a few sessions that
// each wait for their own reply, a producer and a worker, gain nothing from sharing: with one
// batch in flight they take turns, each call waiting for the other's round trip (measured:
// cycle at 2 connections ran no faster than at one). So a second batch goes out only when
// batches have lately held single calls and it would hold a single call beside one.
package inflight

// Policy is a batcher's record of its recent batch sizes. It is not safe for concurrent use:
// the batcher calls it under its own lock. The zero value is ready.
type Policy struct {
	avg int // calls per batch lately, a moving average in 1024ths
}

// fewCalls is the moving average (in 1024ths) below which batches count as single calls.
const fewCalls = 1536

// Sent records a batch of n calls.
func (p *Policy) Sent(n int) {
	if n > 0 {
		p.avg += (n<<10 - p.avg) >> 3
	}
}

// MayAdd reports whether a batch of the queued calls may go out now, while inFlight batches
// carrying flying calls are out, with at most max in flight: always when none is; beside
// others only for a single call, when each batch in flight carries a single call and batches
// lately have too.
func (p *Policy) MayAdd(inFlight, flying, queued, max int) bool {
	if inFlight == 0 {
		return true
	}
	return inFlight < max && p.avg < fewCalls && flying == inFlight && queued == 1
}
