package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// ListJobs lists a page of tube's jobs in one state. Ready, delayed and buried jobs are read
// from their tube's ordered trees from the cursor on: O(log n + page) under the lock.
// Reserved jobs have no per-tube order (they sit in their holders' heaps), so they are
// gathered from every reservation and sorted: O(reserved jobs), which workers bound.
func (b *Backend) ListJobs(ctx context.Context, p backend.ListParams) (*backend.JobPage, error) {
	now, err := b.begin(ctx, "list-jobs")
	if err != nil {
		return nil, err
	}
	defer b.end()
	t := b.tubes[p.Tube]
	if t == nil {
		return nil, backend.ErrNotFound
	}
	var pivot *job
	if p.After != "" {
		key, id, err := backend.DecodeCursor(p.After, p.State)
		if err != nil {
			return nil, err
		}
		pivot = &job{id: id, priority: uint32(key), at: key, seq: uint64(key)}
	}
	limit := backend.ClampLimit(p.Limit, backend.MaxListLimit)
	jobs := make([]*job, 0, limit+1)
	collect := func(j *job) bool {
		jobs = append(jobs, j)
		return len(jobs) <= limit // one more tells whether a next page exists
	}
	switch p.State {
	case backend.Ready:
		t.ready.after(pivot, collect)
	case backend.Delayed:
		t.delayed.after(pivot, collect)
	case backend.Buried:
		t.buried.after(pivot, collect)
	case backend.Reserved:
		b.reservedAfterLocked(t, pivot, collect)
	default:
		return nil, backend.ErrBadCursor
	}
	page := &backend.JobPage{}
	if len(jobs) > limit {
		jobs = jobs[:limit]
		last := jobs[limit-1]
		page.Next = backend.EncodeCursor(p.State, last.sortKey(), last.id)
	}
	page.Jobs = make([]backend.ListedJob, len(jobs))
	for i, j := range jobs {
		body := j.body[:min(len(j.body), max(p.BodyBytes, 0))]
		page.Jobs[i] = backend.ListedJob{JobStats: j.stats(now), BodySize: len(j.body), Body: []byte(body)}
	}
	return page, nil
}

// sortKey is j's key in its state's order, as a cursor carries it.
func (j *job) sortKey() int64 {
	switch j.state {
	case jobReady:
		return int64(j.priority)
	case jobDelayed, jobReserved:
		return j.at
	case jobBuried:
		return int64(j.seq)
	}
	return 0
}

// reservedAfterLocked calls fn on t's reserved jobs after pivot by (deadline, id).
func (b *Backend) reservedAfterLocked(t *tube, pivot *job, fn func(*job) bool) {
	if t.reserved == 0 {
		return
	}
	held := make([]*job, 0, t.reserved)
	for _, j := range b.deadlines.items {
		if j.tube == t && (pivot == nil || byDeadline(pivot, j)) {
			held = append(held, j)
		}
	}
	slices.SortFunc(held, func(x, y *job) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.id, y.id))
	})
	for _, j := range held {
		if !fn(j) {
			return
		}
	}
}

// stateJobs is t's ordered jobs of a bulk-editable state; nil for any other.
func (t *tube) stateJobs(state backend.State) *orderedJobs {
	switch state {
	case backend.Ready:
		return &t.ready
	case backend.Delayed:
		return &t.delayed
	case backend.Buried:
		return &t.buried
	}
	return nil
}

// DeleteJobs deletes up to limit of tube's jobs in state, first in its order first.
func (b *Backend) DeleteJobs(ctx context.Context, name string, state backend.State, limit int) (n int, err error) {
	if _, err := b.begin(ctx, "delete-jobs"); err != nil {
		return 0, err
	}
	defer b.endWrite("delete-jobs", &err)
	t := b.tubes[name]
	if t == nil || t.stateJobs(state) == nil {
		return 0, nil
	}
	from := t.stateJobs(state)
	limit = backend.ClampLimit(limit, backend.MaxBulkLimit)
	// The last deletion may drop the tube (unrefLocked), so it is held alive until the end.
	t.jobs++
	defer func() { t.jobs--; b.unrefLocked(t) }()
	for ; n < limit && from.Len() > 0; n++ {
		j, _ := from.Top()
		b.walDeleteLocked(j)
		b.detachLocked(j)
		t.cmdDelete++
		b.removeLocked(j)
	}
	return n, nil
}

// MoveJobs moves up to limit of from's jobs in state to tube to, keeping their id, priority,
// state, due time and counters. Buried ones join the end of to's buried jobs. With a binlog a
// moved job is written as a deletion and a new full record of the same id in its new tube,
// which a replay (beangate's or beanstalkd's) reads as the job in that tube.
func (b *Backend) MoveJobs(ctx context.Context, fromName, toName string, state backend.State, limit int) (n int, err error) {
	now, err := b.begin(ctx, "move-jobs")
	if err != nil {
		return 0, err
	}
	defer b.endWrite("move-jobs", &err)
	from := b.tubes[fromName]
	if from == nil || fromName == toName || from.stateJobs(state) == nil {
		return 0, nil
	}
	src := from.stateJobs(state)
	limit = backend.ClampLimit(limit, backend.MaxBulkLimit)
	to := b.tubeLocked(toName)
	from.jobs++ // held alive until the end, as in DeleteJobs
	defer func() { from.jobs--; b.unrefLocked(from) }()
	for ; n < limit && src.Len() > 0; n++ {
		j, _ := src.Top()
		if err := b.walReserveLocked(binlog.FullSize(len(toName), len(j.body)) + walUpdateSize); err != nil {
			return n, kickErr(uint64(n), err)
		}
		b.walDeleteLocked(j)
		b.detachLocked(j)
		if from.pol != nil {
			b.leftLocked(j)
		}
		from.jobs--
		to.jobs++
		j.tube = to
		switch state {
		case backend.Ready:
			j.state = jobReady
			b.walPutLocked(j)
			b.readyLocked(j, now)
		case backend.Delayed:
			b.delayLocked(j, timeAt(j.at), 0) // its due time as it was
			b.walPutLocked(j)
		case backend.Buried:
			b.buryLocked(j)
			b.walPutLocked(j)
		}
		if to.pol != nil {
			b.joinedLocked(j)
		}
	}
	return n, nil
}
