package redis

import (
	"context"
	"strconv"

	"github.com/beangate/beangate/backend"
)

// Put stores a new job; its id comes from the namespace-wide sequence, above every id this
// Backend has handed out (idfloor.go). p.Session's used tube is p.Tube (the gateway puts there):
// a store that forgot the session learns it again.
func (b *Backend) Put(ctx context.Context, p backend.PutParams) (uint64, error) {
	if b.spread != nil {
		return b.spreadPut(ctx, p)
	}
	res, err := b.call(ctx, opPut, p.Tube, prio(p.Priority), ms(p.Delay), ms(p.TTR), p.Body,
		b.floorArg(), string(p.Session))
	if err != nil {
		return 0, err
	}
	id, err := toInt(opPut, res)
	if err != nil {
		return 0, err
	}
	b.saw(uint64(id))
	return uint64(id), nil
}

// PutBatch stores jobs one Put at a time: pipelined calls already share round trips (see batch.go).
func (b *Backend) PutBatch(ctx context.Context, ps []backend.PutParams) []backend.PutResult {
	return backend.PutEach(ctx, b, ps)
}

// ReserveJob reserves job id for s if it is ready, delayed or buried.
func (b *Backend) ReserveJob(ctx context.Context, s backend.SessionID, id uint64) (*backend.Job, error) {
	if b.spread != nil {
		return b.spreadReserveJob(ctx, s, id)
	}
	res, err := b.call(ctx, opReserveJob, string(s), padID(id))
	if err != nil {
		return nil, err
	}
	return b.sawJob(newReply(opReserveJob, res).job(0))
}

// Delete removes job id unless another session holds it.
func (b *Backend) Delete(ctx context.Context, s backend.SessionID, id uint64) error {
	return b.callFoundJob(ctx, id, opDelete, string(s), padID(id))
}

// Release returns a job reserved by p.Session to ready or delayed, or buries it under a
// max-reserves policy (backend.ErrBuried).
func (b *Backend) Release(ctx context.Context, p backend.ReleaseParams) error {
	res, err := b.callJob(ctx, p.ID, opRelease, string(p.Session), padID(p.ID), prio(p.Priority), ms(p.Delay))
	if err != nil {
		return err
	}
	switch n, err := toInt(opRelease, res); {
	case err != nil:
		return err
	case n == 0:
		return backend.ErrNotFound
	case n == 2: // a max-reserves policy buried it
		return backend.ErrBuried
	}
	return nil
}

// Bury moves a job reserved by s to its tube's buried list.
func (b *Backend) Bury(ctx context.Context, s backend.SessionID, id uint64, priority uint32) error {
	return b.callFoundJob(ctx, id, opBury, string(s), padID(id), prio(priority))
}

// Touch resets the deadline of a job reserved by s.
func (b *Backend) Touch(ctx context.Context, s backend.SessionID, id uint64) error {
	return b.callFoundJob(ctx, id, opTouch, string(s), padID(id))
}

// Kick moves up to bound buried (else delayed) jobs of tube to ready.
func (b *Backend) Kick(ctx context.Context, tube string, bound uint64) (uint64, error) {
	if b.spread != nil {
		return b.spreadKick(ctx, tube, bound)
	}
	b.waiters.beginHandOut() // the kick's publish may come before its reply
	defer b.waiters.endHandOut()
	res, err := b.call(ctx, opKick, tube, strconv.FormatUint(bound, 10))
	if err != nil {
		return 0, err
	}
	r := newReply(opKick, res)
	n := r.int(0)
	var first []handed
	for i := 1; i < len(r.a); i++ {
		first = append(first, handed{r.str(i), tube})
	}
	if r.err != nil {
		return 0, r.err
	}
	b.waiters.handOut(first)
	return uint64(n), nil
}

// KickJob moves one buried or delayed job to ready.
func (b *Backend) KickJob(ctx context.Context, id uint64) error {
	return b.callFoundJob(ctx, id, opKickJob, padID(id))
}

func prio(p uint32) string { return strconv.FormatUint(uint64(p), 10) }

// callJob is call in job id's slot: the namespace's, or in the spread layout the bucket its id
// names.
func (b *Backend) callJob(ctx context.Context, id uint64, o op, args ...any) (any, error) {
	if b.spread != nil {
		res, _, err := b.spreadCallJob(ctx, id, o, args...) // spread_import.go
		return res, err
	}
	return b.call(ctx, o, args...)
}

// callFoundJob is callFound in job id's slot (see callJob).
func (b *Backend) callFoundJob(ctx context.Context, id uint64, o op, args ...any) error {
	if b.spread != nil {
		res, _, err := b.spreadCallJob(ctx, id, o, args...)
		return found(o, res, err)
	}
	return b.callFound(ctx, o, args...)
}

// callFound runs an operation whose script replies 1 (done) or 0 (not found).
func (b *Backend) callFound(ctx context.Context, o op, args ...any) error {
	res, err := b.call(ctx, o, args...)
	return found(o, res, err)
}

// found reads the reply of an operation that replies 1 (done) or 0 (not found).
func found(o op, res any, err error) error {
	if err != nil {
		return err
	}
	n, err := toInt(o, res)
	if err != nil {
		return err
	}
	if n == 0 {
		return backend.ErrNotFound
	}
	return nil
}
