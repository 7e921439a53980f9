package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/beangate/beangate/backend"
)

// Peek returns job id in any state.
func (b *Backend) Peek(ctx context.Context, id uint64) (*backend.Job, error) {
	if id > math.MaxInt64 {
		return nil, backend.ErrNotFound
	}
	return b.queryJob(ctx, "peek", b.st.get("peek"), int64(id))
}

// PeekState returns the next job of tube in state (ready, delayed or buried).
func (b *Backend) PeekState(ctx context.Context, tube string, state backend.State) (*backend.Job, error) {
	switch state {
	case backend.Ready:
		return b.queryJob(ctx, "peek-ready", b.st.get("peek_ready"), b.now(), tube)
	case backend.Delayed:
		return b.queryJob(ctx, "peek-delayed", b.st.get("peek_delayed"), b.now(), tube)
	case backend.Buried:
		return b.queryJob(ctx, "peek-buried", b.st.get("peek_buried"), tube)
	}
	return nil, opErr("peek", fmt.Errorf("peek of state %v is not supported", state))
}

// queryJob runs a statement returning at most one (id, tube, priority, body) row (peek,
// peek-*); no row is ErrNotFound.
func (b *Backend) queryJob(ctx context.Context, op, stmt string, args ...any) (*backend.Job, error) {
	return b.queryJobScanning(ctx, op, nil, stmt, args...)
}

// queryJobScanning is queryJob for a row with further columns after the job's, scanned into
// more (reserve-job's deadline).
func (b *Backend) queryJobScanning(ctx context.Context, op string, more []any, stmt string, args ...any) (*backend.Job, error) {
	var job *backend.Job
	err := b.run(ctx, op, func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, stmt, args...)
		if err != nil {
			return err
		}
		job, err = collectJob(rows, more...)
		return err
	})
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, backend.ErrNotFound
	}
	return job, nil
}
