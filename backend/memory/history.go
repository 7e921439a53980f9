package memory

import (
	"context"
	"slices"
	"time"

	"github.com/beangate/beangate/backend"
)

// Jobs' histories (backend.Histories), kept in Backend.hist for the jobs put into a tube whose
// policy sets History, from their put to their deletion. They live in memory only: a store
// restarted from its binlog starts its jobs' histories afresh.

// startHistoryLocked begins the history of j, just put by s (nil: not a session's put).
func (b *Backend) startHistoryLocked(j *job, at time.Time, s *session, delay time.Duration) {
	if b.hist == nil {
		b.hist = make(map[uint64][]backend.JobEvent)
	}
	b.hist[j.id] = make([]backend.JobEvent, 0, 2) // the usual life: put, reserved, deleted
	b.recordLocked(j, at, backend.EventPut, s, delay, "")
}

// recordLocked appends an event to j's history, if j keeps one: s is who acted or held it (nil:
// none), policy the policy that acted ("": the client).
func (b *Backend) recordLocked(j *job, at time.Time, kind backend.EventKind, s *session, delay time.Duration, policy string) {
	if len(b.hist) == 0 {
		return
	}
	h, ok := b.hist[j.id]
	if !ok {
		return
	}
	e := backend.JobEvent{At: at, Kind: kind, Delay: delay, Policy: policy}
	if s != nil {
		e.Session, e.Addr = s.id, s.addr
	}
	b.hist[j.id] = backend.AppendEvent(h, e)
}

// dropHistoriesLocked forgets the histories of the jobs whose tube no longer keeps them, after
// the policies changed.
func (b *Backend) dropHistoriesLocked() {
	for id := range b.hist {
		if j := b.jobs.Get(id); j == nil || j.tube.pol == nil || !j.tube.pol.History {
			delete(b.hist, id)
		}
	}
}

// JobHistory returns job id's events, oldest first.
func (b *Backend) JobHistory(ctx context.Context, id uint64) ([]backend.JobEvent, error) {
	if _, err := b.begin(ctx, "job-history"); err != nil { // begin applies time: a TTR run out is in it
		return nil, err
	}
	defer b.end()
	if b.jobs.Get(id) == nil {
		return nil, backend.ErrNotFound
	}
	return slices.Clone(b.hist[id]), nil
}
