package redis

import (
	"context"
	"strconv"

	"github.com/beangate/beangate/backend"
)

// listedFields is how many items list_jobs returns per job.
const listedFields = 16

// ListJobs lists a page of tube's jobs in one state (lua/list_jobs.lua): a cursor is the last
// job's score in its state's sorted set and its id.
func (b *Backend) ListJobs(ctx context.Context, p backend.ListParams) (*backend.JobPage, error) {
	score, member := "", ""
	if p.After != "" {
		key, id, err := backend.DecodeCursor(p.After, p.State)
		if err != nil {
			return nil, err
		}
		score, member = strconv.FormatInt(key, 10), padID(id)
	}
	limit := backend.ClampLimit(p.Limit, backend.MaxListLimit)
	base := b.base
	if b.spread != nil {
		bk, ok, err := b.tubeBucket(ctx, p.Tube, string(opListJobs))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, backend.ErrNotFound
		}
		base = b.spread.base(bk)
	}
	res, _, err := b.callSentIn(ctx, base, opListJobs, p.Tube, p.State.String(), score, member,
		strconv.Itoa(limit+1), strconv.Itoa(max(p.BodyBytes, 0)))
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, backend.ErrNotFound
	}
	r := newReply(opListJobs, res)
	n := len(r.a) / listedFields
	page := &backend.JobPage{Jobs: make([]backend.ListedJob, 0, min(n, limit))}
	for i := 0; i < n && i < limit; i++ {
		at := i * listedFields
		st := r.state(at + 2)
		page.Jobs = append(page.Jobs, backend.ListedJob{
			JobStats: backend.JobStats{
				ID: uint64(r.int(at)), Tube: r.str(at + 1), State: st, Priority: uint32(r.int(at + 3)),
				Age: r.dur(at + 4), Delay: r.dur(at + 5), TTR: r.dur(at + 6), TimeLeft: r.dur(at + 7),
				Reserves: uint32(r.int(at + 8)), Timeouts: uint32(r.int(at + 9)),
				Releases: uint32(r.int(at + 10)), Buries: uint32(r.int(at + 11)), Kicks: uint32(r.int(at + 12)),
			},
			BodySize: int(r.int(at + 13)),
			Body:     []byte(r.str(at + 14)),
		})
		if n > limit && i == limit-1 {
			page.Next = backend.EncodeCursor(p.State, r.int(at+15), uint64(r.int(at)))
		}
	}
	return page, r.err
}

// DeleteJobs deletes up to limit of tube's jobs in state (lua/delete_jobs.lua).
func (b *Backend) DeleteJobs(ctx context.Context, tube string, state backend.State, limit int) (int, error) {
	base := b.base
	if b.spread != nil {
		bk, ok, err := b.tubeBucket(ctx, tube, string(opDeleteJobs))
		if err != nil || !ok {
			return 0, err
		}
		base = b.spread.base(bk)
	}
	res, _, err := b.callSentIn(ctx, base, opDeleteJobs, tube, state.String(), strconv.Itoa(backend.ClampLimit(limit, backend.MaxBulkLimit)))
	if err != nil {
		return 0, err
	}
	n, err := toInt(opDeleteJobs, res)
	return int(n), err
}

// MoveJobs moves up to limit of from's jobs in state to to (lua/move_jobs.lua).
func (b *Backend) MoveJobs(ctx context.Context, from, to string, state backend.State, limit int) (int, error) {
	base := b.base
	if b.spread != nil {
		bk, ok, err := b.spreadMoveBucket(ctx, from, to)
		if err != nil || !ok {
			return 0, err
		}
		base = b.spread.base(bk)
	}
	res, _, err := b.callSentIn(ctx, base, opMoveJobs, from, to, state.String(), strconv.Itoa(backend.ClampLimit(limit, backend.MaxBulkLimit)))
	if err != nil {
		return 0, err
	}
	n, err := toInt(opMoveJobs, res)
	return int(n), err
}
