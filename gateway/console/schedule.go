package console

import (
	"context"
	"net/http"
	"time"

	"github.com/beangate/beangate/backend"
)

func (c *Console) getSchedules(w http.ResponseWriter, r *http.Request) {
	b, ctx, cancel, ok := c.store(w, r)
	if !ok {
		return
	}
	defer cancel()
	ss, err := b.ListSchedules(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	now := time.Now()
	out := Schedules{Schedules: make([]Schedule, len(ss))}
	for i, s := range ss {
		out.Schedules[i] = ScheduleOf(s, now)
	}
	writeJSON(w, out)
}

func (c *Console) postSchedule(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if a.Schedule == nil {
			return Result{}, badRequest("schedule: required")
		}
		s := a.Schedule.Backend()
		if err := s.Validate(); err != nil {
			return Result{}, badRequest(err.Error())
		}
		return Result{N: 1}, b.SetSchedule(ctx, s)
	})
}

func (c *Console) postScheduleClear(w http.ResponseWriter, r *http.Request) {
	c.act(w, r, func(ctx context.Context, b backend.Backend, a Action) (Result, error) {
		if a.Name == "" {
			return Result{}, badRequest("name: required")
		}
		return Result{N: 1}, b.ClearSchedule(ctx, a.Name)
	})
}
