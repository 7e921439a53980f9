package postgres

import (
	"context"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend"
)

// JobHolder reads jobs.reserved_by (sql/job_holder.sql).
func (b *Backend) JobHolder(ctx context.Context, id uint64) (backend.SessionID, error) {
	if id > math.MaxInt64 {
		return "", backend.ErrNotFound
	}
	var (
		holder *string
		found  bool
	)
	err := b.run(ctx, "job-holder", func(ctx context.Context) error {
		holder, found = nil, false
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("job_holder"), b.now(), int64(id)).Query(func(rows pgx.Rows) error {
			_, err := pgx.ForEachRow(rows, []any{&holder}, func() error {
				found = true
				return nil
			})
			return err
		})
		return b.batch(ctx, bt)
	})
	switch {
	case err != nil:
		return "", err
	case !found:
		return "", backend.ErrNotFound
	case holder == nil:
		return "", nil
	}
	return backend.SessionID(*holder), nil
}
