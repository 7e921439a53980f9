package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReadyAges reads how long each tube's first ready job has been ready, in one statement for
// all the tubes (sql/ready_ages.sql).
func (b *Backend) ReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error) {
	var ages map[string]time.Duration
	err := b.run(ctx, "ready ages", func(ctx context.Context) error {
		ages = make(map[string]time.Duration, len(tubes))
		rows, err := b.pool.Query(ctx, b.st.get("ready_ages"), b.now(), tubes)
		if err != nil {
			return err
		}
		var (
			tube string
			us   int64
		)
		_, err = pgx.ForEachRow(rows, []any{&tube, &us}, func() error {
			ages[tube] = time.Duration(us) * time.Microsecond
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return ages, nil
}
