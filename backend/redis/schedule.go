package redis

import (
	"context"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
)

// Schedules live in Redis beside the jobs (lua/schedule_*.lua): a tick is claimed and its job
// put by one function call (lua/schedule_fire.lua), which Redis runs alone, so two gateways
// asking for the same tick put one job.

// SetSchedule creates or replaces the schedule named s.Name.
func (b *Backend) SetSchedule(ctx context.Context, s backend.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	args := []any{s.Name, s.Tube, s.Body, prio(s.Priority), ms(s.TTR), ms(s.Delay), s.Cron, s.Timezone, ms(s.Every)}
	if b.spread != nil {
		return b.spreadSetSchedule(ctx, s, args)
	}
	_, err := b.call(ctx, opScheduleSet, args...)
	return err
}

// ClearSchedule removes the schedule named name.
func (b *Backend) ClearSchedule(ctx context.Context, name string) error {
	if b.spread != nil {
		return b.spreadClearSchedule(ctx, name)
	}
	return b.callFound(ctx, opScheduleClear, name)
}

// ListSchedules returns every schedule, sorted by name.
func (b *Backend) ListSchedules(ctx context.Context) ([]backend.ScheduleState, error) {
	var res any
	var err error
	if b.spread != nil {
		res, err = b.spreadScheduleLists(ctx)
	} else {
		res, err = b.call(ctx, opScheduleList)
	}
	if err != nil {
		return nil, err
	}
	r := newReply(opScheduleList, res)
	var out []backend.ScheduleState
	for i := 0; i+12 <= len(r.a); i += 12 {
		s := backend.ScheduleState{Schedule: backend.Schedule{
			Name: r.str(i), Tube: r.str(i + 1), Body: []byte(r.str(i + 2)), Priority: uint32(r.int(i + 3)),
			TTR: r.dur(i + 4), Delay: r.dur(i + 5), Cron: r.str(i + 6), Timezone: r.str(i + 7), Every: r.dur(i + 8),
		}, LastTick: msTime(r.int(i + 9)), LastJob: uint64(r.int(i + 10))}
		if at := r.int(i + 11); at != 0 {
			s.LastRun = msTime(at)
		}
		out = append(out, s)
	}
	if r.err != nil {
		return nil, r.err
	}
	backend.SortSchedules(out)
	return out, nil
}

// FireSchedule claims tick and puts the schedule's job, in one function call.
func (b *Backend) FireSchedule(ctx context.Context, name string, tick time.Time) (uint64, bool, error) {
	var res any
	var err error
	if b.spread != nil {
		res, err = b.spreadFireSchedule(ctx, name, tick)
	} else {
		res, err = b.call(ctx, opScheduleFire, name, strconv.FormatInt(tick.UnixMilli(), 10), b.floorArg())
	}
	if err != nil {
		return 0, false, err
	}
	n, err := toInt(opScheduleFire, res)
	switch {
	case err != nil:
		return 0, false, err
	case n < 0:
		return 0, false, backend.ErrNotFound
	case n == 0:
		return 0, false, nil
	}
	b.saw(uint64(n))
	return uint64(n), true, nil
}

// msTime is a time the scripts keep, in milliseconds since the epoch, in UTC.
func msTime(n int64) time.Time { return time.UnixMilli(n).UTC() }
