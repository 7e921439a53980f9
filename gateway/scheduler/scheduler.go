// Package scheduler fires a store's schedules (backend.Schedules) from one gateway process.
// Every gateway of a fleet runs one, with no leader among them: each works out, from the
// schedules it lists, the latest tick due, and asks the store to fire it; the store claims the
// tick and puts its job in one atomic step, so the first gateway to ask puts the job and the
// others find the tick taken. A tick missed while no gateway ran is therefore put once, by
// whichever comes back first: only the latest tick due is ever asked for.
package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/beangate/beangate/backend"
)

// Refresh is how often a scheduler lists the schedules when none is due sooner: a schedule set
// through another gateway starts firing here within it.
const Refresh = time.Second

// Scheduler fires the schedules of one store. Use New, then Run.
type Scheduler struct {
	store   backend.Schedules
	log     *slog.Logger
	timeout time.Duration // bounds each store call
}

// New returns a scheduler for store, each call bounded by timeout.
func New(store backend.Schedules, log *slog.Logger, timeout time.Duration) *Scheduler {
	return &Scheduler{store: store, log: log, timeout: timeout}
}

// Run fires due ticks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		wake, err := s.round(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && !failing:
			s.log.Warn("schedules: cannot reach the store; retrying each second", "err", err)
		case err == nil && failing:
			s.log.Info("schedules: the store answers again")
		}
		failing = err != nil
		timer.Reset(max(time.Until(wake), 0))
	}
}

// round fires every schedule with a tick due and returns when the next round is due: at the
// earliest next tick, or after Refresh.
func (s *Scheduler) round(ctx context.Context) (time.Time, error) {
	list, err := s.list(ctx)
	now := time.Now()
	wake := now.Add(Refresh)
	if err != nil {
		return wake, err
	}
	for _, sc := range list {
		if tick := sc.LatestTick(sc.LastTick, now); !tick.IsZero() {
			if err := s.fire(ctx, sc, tick); err != nil {
				return wake, err
			}
		}
		if next := sc.NextTick(now); !next.IsZero() && next.Before(wake) {
			wake = next
		}
	}
	return wake, nil
}

func (s *Scheduler) list(ctx context.Context) ([]backend.ScheduleState, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.store.ListSchedules(ctx)
}

func (s *Scheduler) fire(ctx context.Context, sc backend.ScheduleState, tick time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	id, fired, err := s.store.FireSchedule(ctx, sc.Name, tick)
	switch {
	case errors.Is(err, backend.ErrNotFound): // cleared since the list
		return nil
	case err != nil:
		return err
	case fired:
		s.log.Debug("schedule fired", "schedule", sc.Name, "tube", sc.Tube, "tick", tick, "job", id)
	}
	return nil
}
