package postgres

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
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
		e, err := decodeEvent(s)
		if err != nil {
			return nil, opErr("job-history", fmt.Errorf("event %d: %w", i, err))
		}
		out = append(out, e)
	}
	return out, nil
}

// decodeEvent reads one event as job_event (migration 013) writes it: "µs kind session address
// delay-µs policy", the last four possibly empty.
func decodeEvent(s string) (backend.JobEvent, error) {
	f := strings.Split(s, " ")
	if len(f) != 6 {
		return backend.JobEvent{}, fmt.Errorf("%d fields", len(f))
	}
	at, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return backend.JobEvent{}, fmt.Errorf("time: %w", err)
	}
	delay, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil {
		return backend.JobEvent{}, fmt.Errorf("delay: %w", err)
	}
	return backend.JobEvent{At: time.UnixMicro(at), Kind: backend.EventKind(f[1]),
		Session: backend.SessionID(f[2]), Addr: f[3], Delay: time.Duration(delay) * time.Microsecond,
		Policy: f[5]}, nil
}
