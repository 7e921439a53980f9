package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// Peek returns job id in any state.
func (b *Backend) Peek(ctx context.Context, id uint64) (*backend.Job, error) {
	if id > math.MaxInt64 {
		return nil, backend.ErrNotFound
	}
	return b.peek(ctx, "peek", b.st.get("peek"), int64(id), false)
}

// PeekState returns the next job of tube in state (ready, delayed or buried).
func (b *Backend) PeekState(ctx context.Context, tube string, state backend.State) (*backend.Job, error) {
	var stmt string
	switch state {
	case backend.Ready:
		stmt = "peek_ready"
	case backend.Delayed:
		stmt = "peek_delayed"
	case backend.Buried:
		stmt = "peek_buried"
	default:
		return nil, fmt.Errorf("postgres: peek of state %v is not supported", state)
	}
	return b.peek(ctx, stmt, b.st.get(stmt), tube, true)
}

// peek runs a job query, after the promote step when the state matters (a delayed job whose time
// has come is ready).
func (b *Backend) peek(ctx context.Context, op, stmt string, arg any, promote bool) (*backend.Job, error) {
	var job *backend.Job
	err := b.run(ctx, op, func(ctx context.Context) error {
		job = nil
		bt := &pgx.Batch{}
		if promote {
			b.promote(bt)
		}
		bt.Queue(stmt, arg).Query(func(rows pgx.Rows) error {
			var err error
			job, err = collectJob(rows)
			return err
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, backend.ErrNotFound
	}
	return job, nil
}
