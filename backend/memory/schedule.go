package memory

import (
	"context"
	"slices"
	"time"

	"github.com/beangate/beangate/backend"
)

// Schedules (backend.Schedules): kept in the Backend beside the jobs, and with a binlog in a
// file beside it (schedulefile.go), so that a restart keeps their last runs.

// schedules is the store's schedule state.
type schedules struct {
	list []scheduleEntry // sorted by name
	file *scheduleFile   // nil without a binlog
}

// scheduleEntry is one schedule with its last run; PrevTick is the LastTick before the latest
// claim, which a restart goes back to if that claim's job never reached the binlog.
type scheduleEntry struct {
	backend.ScheduleState
	PrevTick time.Time
}

func (b *Backend) scheduleIndexLocked(name string) int {
	return slices.IndexFunc(b.sched.list, func(e scheduleEntry) bool { return e.Name == name })
}

// saveSchedulesLocked writes the schedules file, if there is one.
func (b *Backend) saveSchedulesLocked() error {
	if b.sched.file == nil {
		return nil
	}
	return b.sched.file.save(b.sched.list)
}

// SetSchedule creates or replaces the schedule named s.Name.
func (b *Backend) SetSchedule(ctx context.Context, s backend.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	now, err := b.begin(ctx, "set-schedule")
	if err != nil {
		return err
	}
	defer b.end()
	e := scheduleEntry{ScheduleState: backend.ScheduleState{Schedule: s, LastTick: now.UTC()}}
	e.Body = slices.Clone(s.Body)
	old := slices.Clone(b.sched.list)
	if i := b.scheduleIndexLocked(s.Name); i >= 0 {
		if b.sched.list[i].SameTiming(s) {
			e.LastTick, e.PrevTick = b.sched.list[i].LastTick, b.sched.list[i].PrevTick
		}
		e.LastJob, e.LastRun = b.sched.list[i].LastJob, b.sched.list[i].LastRun
		b.sched.list[i] = e
	} else {
		b.sched.list = append(b.sched.list, e)
		slices.SortFunc(b.sched.list, func(x, y scheduleEntry) int { return compareNames(x.Name, y.Name) })
	}
	if err := b.saveSchedulesLocked(); err != nil {
		b.sched.list = old
		return opErr("set-schedule", err)
	}
	return nil
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ListSchedules returns every schedule, sorted by name.
func (b *Backend) ListSchedules(ctx context.Context) ([]backend.ScheduleState, error) {
	if _, err := b.begin(ctx, "list-schedules"); err != nil {
		return nil, err
	}
	defer b.end()
	out := make([]backend.ScheduleState, len(b.sched.list))
	for i, e := range b.sched.list {
		out[i] = e.ScheduleState
		out[i].Body = slices.Clone(e.Body)
	}
	return out, nil
}

// ClearSchedule removes the schedule named name.
func (b *Backend) ClearSchedule(ctx context.Context, name string) error {
	if _, err := b.begin(ctx, "clear-schedule"); err != nil {
		return err
	}
	defer b.end()
	i := b.scheduleIndexLocked(name)
	if i < 0 {
		return backend.ErrNotFound
	}
	old := slices.Clone(b.sched.list)
	b.sched.list = slices.Delete(b.sched.list, i, i+1)
	if err := b.saveSchedulesLocked(); err != nil {
		b.sched.list = old
		return opErr("clear-schedule", err)
	}
	return nil
}

// FireSchedule claims tick and puts the schedule's job under the lock. With a binlog, the
// claim is written to the schedules file (synced) before the job's record is committed: a crash
// between the two leaves a claim whose job id the binlog never reached, which Open takes back
// (restoreClaims), so the tick is fired again rather than lost.
func (b *Backend) FireSchedule(ctx context.Context, name string, tick time.Time) (id uint64, fired bool, err error) {
	now, err := b.begin(ctx, "fire-schedule")
	if err != nil {
		return 0, false, err
	}
	defer b.endWrite("fire-schedule", &err)
	i := b.scheduleIndexLocked(name)
	if i < 0 {
		return 0, false, backend.ErrNotFound
	}
	e := b.sched.list[i]
	if !e.LastTick.Before(tick) {
		return 0, false, nil
	}
	id, err = b.putLocked(backend.PutParams{Tube: e.Tube, Priority: e.Priority, Delay: e.Delay, TTR: e.TTR,
		Body: slices.Clone(e.Body)}, now)
	if err != nil {
		return 0, false, err
	}
	e.PrevTick, e.LastTick, e.LastJob, e.LastRun = e.LastTick, tick.UTC(), id, now.UTC()
	b.sched.list[i] = e
	if err := b.saveSchedulesLocked(); err != nil {
		// The job is put and stays; the claim is kept in memory, so this process does not put
		// the tick twice, and the file catches up with the next change.
		return id, true, opErr("fire-schedule", err)
	}
	return id, true, nil
}

// restoreClaimsLocked takes back, after a replay, each claim whose job the binlog does not
// hold (its id is beyond every id replayed): the crash came between the claim and the commit.
func (b *Backend) restoreClaimsLocked() {
	for i, e := range b.sched.list {
		if e.LastJob > b.nextID {
			e.LastTick, e.LastJob, e.LastRun = e.PrevTick, 0, time.Time{}
			b.sched.list[i] = e
		}
	}
}
