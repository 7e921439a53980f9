package redis

import (
	"context"
	"errors"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// In the spread layout a schedule lives in its tube's first bucket, where schedule_fire can claim
// a tick and put the job in one call, as in one slot; the home slot's {prefix}:schedules hash
// names each schedule's bucket, so that a list or a fire finds it.

func (b *Backend) scheduleIndex() string { return b.spread.home + ":schedules" }

// scheduleBucket is the bucket that keeps schedule name, or ErrNotFound.
func (b *Backend) scheduleBucket(ctx context.Context, name string) (int, error) {
	v, err := b.client.HGet(ctx, b.scheduleIndex(), name).Result()
	if errors.Is(err, goredis.Nil) {
		return 0, backend.ErrNotFound
	}
	if err != nil {
		return 0, opErr("reading a schedule's bucket", err)
	}
	bk, err := strconv.Atoi(v)
	if err != nil {
		return 0, opErr("reading a schedule's bucket", err)
	}
	return bk, nil
}

func (b *Backend) spreadSetSchedule(ctx context.Context, s backend.Schedule, args []any) error {
	r, _, err := b.placement(ctx, s.Tube, true)
	if err != nil {
		return opErr(string(opScheduleSet), err)
	}
	bk := r.Buckets[0]
	// A schedule whose tube moves to another bucket takes its record along (so that schedule_set
	// there keeps its last tick when its timing is the same), the index is pointed at the new
	// bucket, and only then the old record goes: a list never misses it.
	old, err := b.scheduleBucket(ctx, s.Name)
	moved := err == nil && old != bk
	if err != nil && !errors.Is(err, backend.ErrNotFound) {
		return err
	}
	if moved {
		rec, err := b.client.HGetAll(ctx, b.spread.base(old)+":sc:"+s.Name).Result()
		if err != nil {
			return opErr(string(opScheduleSet), err)
		}
		if len(rec) > 0 {
			if err := b.client.HSet(ctx, b.spread.base(bk)+":sc:"+s.Name, rec).Err(); err != nil {
				return opErr(string(opScheduleSet), err)
			}
		}
	}
	if _, err := b.callIn(ctx, bk, opScheduleSet, args...); err != nil {
		return err
	}
	if err := b.client.HSet(ctx, b.scheduleIndex(), s.Name, bk).Err(); err != nil {
		return opErr(string(opScheduleSet), err)
	}
	if moved {
		if err := b.callFoundIn(ctx, old, opScheduleClear, s.Name); err != nil && !errors.Is(err, backend.ErrNotFound) {
			return err
		}
	}
	return nil
}

func (b *Backend) spreadClearSchedule(ctx context.Context, name string) error {
	bk, err := b.scheduleBucket(ctx, name)
	if err != nil {
		return err
	}
	if err := b.callFoundIn(ctx, bk, opScheduleClear, name); err != nil && !errors.Is(err, backend.ErrNotFound) {
		return err
	}
	if err := b.client.HDel(ctx, b.scheduleIndex(), name).Err(); err != nil {
		return opErr(string(opScheduleClear), err)
	}
	return nil
}

// spreadScheduleLists is every bucket's schedule_list reply.
func (b *Backend) spreadScheduleLists(ctx context.Context) ([]any, error) {
	idx, err := b.client.HGetAll(ctx, b.scheduleIndex()).Result()
	if err != nil {
		return nil, opErr(string(opScheduleList), err)
	}
	seen := map[string]bool{}
	var all []any
	for _, v := range idx {
		if seen[v] {
			continue
		}
		seen[v] = true
		bk, err := strconv.Atoi(v)
		if err != nil {
			return nil, opErr(string(opScheduleList), err)
		}
		res, err := b.callIn(ctx, bk, opScheduleList)
		if err != nil {
			return nil, err
		}
		if a, ok := res.([]any); ok {
			all = append(all, a...)
		}
	}
	return all, nil
}

func (b *Backend) spreadFireSchedule(ctx context.Context, name string, tick time.Time) (any, error) {
	bk, err := b.scheduleBucket(ctx, name)
	if errors.Is(err, backend.ErrNotFound) {
		return int64(-1), nil // as schedule_fire answers for no such schedule
	}
	if err != nil {
		return nil, err
	}
	return b.callIn(ctx, bk, opScheduleFire, name, strconv.FormatInt(tick.UnixMilli(), 10), b.floorArg(), strconv.Itoa(bk))
}
