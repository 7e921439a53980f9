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
	return b.queryJob(ctx, "peek", b.st.get("peek"), false, int64(id))
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
	return b.queryJob(ctx, stmt, b.st.get(stmt), true, tube)
}

// queryJob runs a statement returning at most one (id, tube, priority, body) row (peek, peek-*,
// reserve-job), after the promote step when the state matters (a delayed job whose time has come
// is ready); no row is ErrNotFound.
func (b *Backend) queryJob(ctx context.Context, op, stmt string, promote bool, args ...any) (*backend.Job, error) {
	var job *backend.Job
	err := b.run(ctx, op, func(ctx context.Context) error {
		job = nil
		bt := &pgx.Batch{}
		if promote {
			if err := b.promote(ctx); err != nil {
				return err
			}
		}
		bt.Queue(stmt, args...).Query(func(rows pgx.Rows) error {
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
