package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend"
)

// Schedules live in the schedules table (migration 012). A tick is claimed and its job put in
// one transaction (schedule_claim.sql, put.sql, schedule_ran.sql): two gateways asking for the
// same tick queue on the schedule's row, and the second finds the tick taken.

// SetSchedule creates or replaces the schedule named s.Name.
func (b *Backend) SetSchedule(ctx context.Context, s backend.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	body := s.Body
	if body == nil {
		body = []byte{}
	}
	return b.run(ctx, "set schedule", func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, b.st.get("schedule_set"), b.now(), s.Name, s.Tube, body, int64(s.Priority),
			s.TTR.Microseconds(), s.Delay.Microseconds(), s.Cron, s.Timezone, s.Every.Microseconds())
		return err
	})
}

// ClearSchedule removes the schedule named name.
func (b *Backend) ClearSchedule(ctx context.Context, name string) error {
	found := false
	err := b.run(ctx, "clear schedule", func(ctx context.Context) error {
		found = false
		rows, err := b.pool.Query(ctx, b.st.get("schedule_clear"), name)
		if err != nil {
			return err
		}
		_, err = pgx.ForEachRow(rows, []any{new(string)}, func() error { found = true; return nil })
		return err
	})
	if err == nil && !found {
		return backend.ErrNotFound
	}
	return err
}

// ListSchedules returns every schedule, sorted by name.
func (b *Backend) ListSchedules(ctx context.Context) ([]backend.ScheduleState, error) {
	var out []backend.ScheduleState
	err := b.run(ctx, "list schedules", func(ctx context.Context) error {
		out = out[:0]
		rows, err := b.pool.Query(ctx, b.st.get("schedule_list"))
		if err != nil {
			return err
		}
		var s backend.ScheduleState
		var priority, ttr, delay, every int64
		var lastJob *int64
		var lastRun *time.Time
		_, err = pgx.ForEachRow(rows, []any{&s.Name, &s.Tube, &s.Body, &priority, &ttr, &delay, &s.Cron,
			&s.Timezone, &every, &s.LastTick, &lastJob, &lastRun}, func() error {
			x := s
			x.Priority, x.TTR, x.Delay, x.Every = uint32(priority), time.Duration(ttr)*time.Microsecond,
				time.Duration(delay)*time.Microsecond, time.Duration(every)*time.Microsecond
			x.LastTick = x.LastTick.UTC()
			x.LastJob, x.LastRun = 0, time.Time{}
			if lastJob != nil {
				x.LastJob = uint64(*lastJob)
			}
			if lastRun != nil {
				x.LastRun = lastRun.UTC()
			}
			x.Body = append([]byte(nil), s.Body...)
			out = append(out, x)
			return nil
		})
		return err
	})
	return out, err
}

// FireSchedule claims tick and puts the schedule's job, in one transaction.
func (b *Backend) FireSchedule(ctx context.Context, name string, tick time.Time) (uint64, bool, error) {
	var (
		exists, claimed bool
		tube            string
		res             writeResult
		delayUS         int64
	)
	policies := b.policiesActive()
	point := b.undurable.take() // a commit that writes flushes the reserves committed before it
	err := b.run(ctx, "fire schedule", func(ctx context.Context) error {
		exists, claimed, res = false, false, writeResult{}
		return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			var t *string
			var body []byte
			var priority, ttrUS, delay *int64
			if err := tx.QueryRow(ctx, b.st.get("schedule_claim"), name, tick).Scan(&exists, &t, &body, &priority,
				&delay, &ttrUS); err != nil {
				return err
			}
			if t == nil {
				return nil
			}
			claimed, tube, delayUS = true, *t, *delay
			if policies {
				if locks := b.policyLocks([]string{tube}, func(p backend.Policy) bool { return p.Unique }); len(locks) > 0 {
					if _, err := tx.Exec(ctx, b.st.get("lock_policy_tubes"), locks); err != nil {
						return err
					}
				}
			}
			now := b.now()
			var ord, id int64
			var due *time.Time
			dest := []any{&ord, &id, &res.heads, &res.handed, &due}
			if policies {
				dest = append(dest, &res.deduped)
			}
			args := []any{now, []string{tube}, []int64{*priority}, []int64{delayUS}, []int64{*ttrUS}, [][]byte{body},
				b.leases.list(), []*string{nil}, []*string{nil}}
			if policies {
				args = append(args, []string{""}) // no session put it (put.sql's $10, for histories)
			}
			if err := tx.QueryRow(ctx, b.variant("put", policies), args...).Scan(dest...); err != nil {
				return err
			}
			res.id = uint64(id)
			_, err := tx.Exec(ctx, b.st.get("schedule_ran"), now, name, id)
			return err
		})
	})
	switch {
	case err != nil:
		return 0, false, err
	case !exists:
		return 0, false, backend.ErrNotFound
	case !claimed:
		return 0, false, nil
	}
	if !res.deduped {
		b.undurable.durable(point)
	}
	b.putDone(tube, res)
	if delayUS <= 0 || res.heads {
		b.waiters.wake(tube, 1)
	}
	return res.id, true, nil
}
