package postgres

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend"
)

// JobHistory reads jobs.history (sql/job_history.sql; the trigger of migration 013 writes it).
func (b *Backend) JobHistory(ctx context.Context, id uint64) ([]backend.JobEvent, error) {
	if id > math.MaxInt64 {
		return nil, backend.ErrNotFound
	}
	var (
		texts []string
		found bool
	)
	err := b.run(ctx, "job-history", func(ctx context.Context) error {
		texts, found = nil, false
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("job_history"), b.now(), int64(id)).Query(func(rows pgx.Rows) error {
			_, err := pgx.ForEachRow(rows, []any{&texts}, func() error {
				found = true
				return nil
			})
			return err
		})
		return b.batch(ctx, bt)
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, backend.ErrNotFound
	}
	out := make([]backend.JobEvent, 0, len(texts))
	for i, s := range texts {
		e, err := backend.ParseEvent(s, time.Microsecond)
		if err != nil {
			return nil, opErr("job-history", fmt.Errorf("event %d: %w", i, err))
		}
		out = append(out, e)
	}
	return out, nil
}
