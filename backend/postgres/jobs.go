package postgres

import (
	"context"
	"math"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// ownerOp runs a statement that acts on one job (release, bury, touch, kick-job) and reports
// ErrNotFound when it matched no row. It returns the tube column, the first, and scans any further
// columns into more.
func (b *Backend) ownerOp(ctx context.Context, op, stmt string, more []any, args ...any) (string, error) {
	var tube string
	dest := append([]any{&tube}, more...)
	found := false
	err := b.run(ctx, op, func(ctx context.Context) error {
		found = false
		rows, err := b.pool.Query(ctx, stmt, args...)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, dest, func() error { found = true; return nil })
		return err
	})
	if err != nil {
		return "", err
	}
	if !found {
		return "", backend.ErrNotFound
	}
	return tube, nil
}

// Release returns a job reserved by p.Session to ready or delayed.
func (b *Backend) Release(ctx context.Context, p backend.ReleaseParams) error {
	if p.ID > math.MaxInt64 {
		return backend.ErrNotFound
	}
	var announced bool  // ready, or delayed and due first in its tube
	var actedBy *string // the policy that buried it instead, or delayed it (retry-delay)
	more, policies := []any{&announced}, b.policiesActive()
	if policies {
		more = append(more, &actedBy)
	}
	tube, err := b.ownerOp(ctx, "release", b.variant("release", policies), more,
		b.now(), string(p.Session), int64(p.ID), int64(p.Priority), p.Delay.Microseconds(), b.leases.list())
	if err != nil {
		return err
	}
	b.empty.gave(string(p.Session), p.ID)
	if announced {
		b.waiters.wake(tube, 1)
	}
	if !policies {
		return nil
	}
	b.cameBack(tube)
	switch {
	case actedBy == nil:
	case *actedBy == backend.PolicyRetryDelay:
		b.report(backend.PolicyAction{Tube: tube, Policy: *actedBy, Action: backend.ActionDelay, Job: p.ID})
	default:
		b.report(backend.PolicyAction{Tube: tube, Policy: *actedBy, Action: backend.ActionBury, Job: p.ID})
		return backend.ErrBuried
	}
	return nil
}

// Bury moves a job reserved by s to its tube's buried list.
func (b *Backend) Bury(ctx context.Context, s backend.SessionID, id uint64, priority uint32) error {
	if id > math.MaxInt64 {
		return backend.ErrNotFound
	}
	tube, err := b.ownerOp(ctx, "bury", b.stmt("bury"), nil, b.now(), string(s), int64(id), int64(priority))
	if err == nil {
		b.empty.gave(string(s), id)
		b.cameBack(tube)
	}
	return err
}

// Touch restarts the TTR of a job reserved by s.
func (b *Backend) Touch(ctx context.Context, s backend.SessionID, id uint64) error {
	if id > math.MaxInt64 {
		return backend.ErrNotFound
	}
	b.undurable.begin(string(s))
	_, err := b.ownerOp(ctx, "touch", b.st.get("touch"), nil, b.now(), string(s), int64(id))
	b.undurable.endOne(string(s), err == nil)
	return err
}

// ReserveJob reserves job id for s unless it is reserved.
func (b *Backend) ReserveJob(ctx context.Context, s backend.SessionID, id uint64) (*backend.Job, error) {
	if id > math.MaxInt64 {
		return nil, backend.ErrNotFound
	}
	b.undurable.begin(string(s))
	var due time.Time
	job, err := b.queryJobScanning(ctx, "reserve-job", []any{&due}, b.st.get("reserve_job"), b.now(), string(s), int64(id))
	b.undurable.endOne(string(s), err == nil)
	if err != nil {
		return nil, err
	}
	b.empty.took(string(s), job.ID)
	b.reservedWithoutStatement(job.Tube, due)
	return job, nil
}

// reservedWithoutStatement announces a reservation no reserve statement made (a handed put, a
// reserve-job): the "nothing ready" answers its deadline makes wrong are dropped, and the
// reserves waiting on its tube learn when it runs out.
func (b *Backend) reservedWithoutStatement(tube string, due time.Time) {
	b.empty.reservedUntil(tube, &due)
	b.waiters.reservedUntil(tube, due)
}

// Kick moves up to bound buried (else delayed) jobs of tube to ready.
func (b *Backend) Kick(ctx context.Context, tube string, bound uint64) (uint64, error) {
	if bound > math.MaxInt64 {
		bound = math.MaxInt64
	}
	var (
		kicked, notified int64
		first            []int64
	)
	err := b.run(ctx, "kick", func(ctx context.Context) error {
		return b.pool.QueryRow(ctx, b.st.get("kick"), b.now(), tube, int64(bound)).Scan(&kicked, &notified, &first)
	})
	if err != nil {
		return 0, err
	}
	// The first kicked go to this gateway's waiting reserves one by one, in the order they moved;
	// the rest wake whoever is left, as any job made ready.
	back := handedJobs{ids: first, tubes: make([]string, len(first)), paused: make([]bool, len(first))}
	for i := range first {
		back.tubes[i] = tube
	}
	b.waiters.handOut(back)
	if rest := int(kicked) - len(first); rest > 0 {
		b.waiters.wake(tube, rest)
	}
	return uint64(kicked), nil
}

// KickJob moves one buried or delayed job to ready.
func (b *Backend) KickJob(ctx context.Context, id uint64) error {
	if id > math.MaxInt64 {
		return backend.ErrNotFound
	}
	tube, err := b.ownerOp(ctx, "kick-job", b.st.get("kick_job"), nil, b.now(), int64(id))
	if err != nil {
		return err
	}
	b.waiters.wake(tube, 1)
	return nil
}

// collectJob reads at most one (id, tube, priority, body) row, scanning any further columns
// into more.
func collectJob(rows pgx.Rows, more ...any) (*backend.Job, error) {
	var job *backend.Job
	var id, prio int64
	var tube string
	var body []byte
	_, err := pgx.ForEachRow(rows, append([]any{&id, &tube, &prio, &body}, more...), func() error {
		job = &backend.Job{ID: uint64(id), Tube: tube, Priority: uint32(prio), Body: body}
		return nil
	})
	return job, err
}
