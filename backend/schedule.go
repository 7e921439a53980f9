package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedules is the part of Admin that keeps periodic jobs: each schedule puts one job into its
// tube at every tick of its cron expression or interval, for the whole fleet.
//
// The store only keeps schedules and claims ticks; each gateway's scheduler (package
// gateway/schedule) works out the ticks from the schedules it lists and asks the store to fire
// them. A tick is claimed and its job put in one atomic step (FireSchedule), so that however
// many gateways ask, and whatever fails between them, each tick puts one job or none — never
// two — with no leader to elect: the store's LastTick is the only agreement there is.
//
// A tick missed while no gateway ran is not put once per missed tick: a scheduler fires only
// the latest tick due (Schedule.LatestTick), so a fleet coming back puts one catch-up job.
type Schedules interface {
	// SetSchedule creates or replaces whole the schedule named s.Name; s must pass s.Validate
	// (ErrBadSchedule otherwise). A new schedule's ticks begin after the store's clock now. A
	// replaced schedule keeps its last run when its timing (cron, timezone, every) is the same
	// — so that gateways setting their config's schedules at each start neither repeat nor
	// lose a tick — and otherwise starts again from now.
	SetSchedule(ctx context.Context, s Schedule) error

	// ListSchedules returns every schedule with its last run, sorted by name.
	ListSchedules(ctx context.Context) ([]ScheduleState, error)

	// ClearSchedule removes the schedule named name; ErrNotFound if there is none.
	ClearSchedule(ctx context.Context, name string) error

	// FireSchedule claims tick of the schedule named name and puts its job, in one atomic
	// step: if the schedule's LastTick is before tick, it records tick as LastTick, puts the
	// job as Put would (policies apply, waiting reserves are woken) and returns its id with
	// fired true; otherwise it changes nothing and returns fired false. ErrNotFound if there
	// is no such schedule.
	FireSchedule(ctx context.Context, name string, tick time.Time) (id uint64, fired bool, err error)
}

// ErrBadSchedule: a schedule that does not validate (the error wraps it with the reason).
var ErrBadSchedule = errors.New("bad schedule")

// Schedule is one periodic job: what to put, where, and when.
type Schedule struct {
	Name string // 1..MaxPolicyTubeLen characters of a tube name
	Tube string
	// Cron is a standard 5-field cron expression (minute hour day-of-month month day-of-week)
	// or a descriptor such as @hourly, in Timezone (UTC when empty). Exactly one of Cron and
	// Every is set.
	Cron     string
	Timezone string        // an IANA zone name, for Cron only
	Every    time.Duration // a fixed interval, >= 1s: ticks at the multiples of Every since the zero time
	Body     []byte
	Priority uint32
	TTR      time.Duration // >= 1s
	Delay    time.Duration
}

// ScheduleState is a schedule as the store keeps it, with its last run.
type ScheduleState struct {
	Schedule
	// LastTick is the latest tick claimed, or when the schedule (or its timing) was set if
	// none since: the ticks up to it are done.
	LastTick time.Time
	// LastJob is the id of the job the last claimed tick put (0: none yet, or a unique policy
	// answered an existing job), LastRun when it was put (zero: never).
	LastJob uint64
	LastRun time.Time
}

// MaxScheduleBody bounds a schedule's body: a schedule lives in the store's schedule list,
// which every gateway reads each second.
const MaxScheduleBody = 64 << 10

// cronParser is the standard parser (5 fields, or a descriptor), as ParseStandard uses.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Validate checks s, answering ErrBadSchedule wrapped with the reason.
func (s Schedule) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadSchedule, s.Name, fmt.Sprintf(format, a...))
	}
	if err := checkName(s.Name); err != "" {
		return bad("name %s", err)
	}
	if err := checkName(s.Tube); err != "" {
		return bad("tube %s", err)
	}
	switch {
	case s.Cron == "" && s.Every == 0:
		return bad("needs a cron expression or an interval (every)")
	case s.Cron != "" && s.Every != 0:
		return bad("has both a cron expression and an interval (every): give one")
	case s.Every != 0 && s.Timezone != "":
		return bad("timezone applies to a cron expression, not to an interval (every)")
	case s.Every < 0 || s.Every != 0 && s.Every < time.Second:
		return bad("every %v: must be at least 1s", s.Every)
	case s.Every%time.Second != 0:
		return bad("every %v: must be whole seconds", s.Every)
	}
	if s.Cron != "" {
		if _, err := s.cron(); err != nil {
			return bad("%v", err)
		}
	}
	if s.TTR < time.Second {
		return bad("ttr %v: must be at least 1s", s.TTR)
	}
	if s.Delay < 0 || s.Delay > MaxRetryDelay {
		return bad("delay %v: must be within 0..%v", s.Delay, MaxRetryDelay)
	}
	if s.TTR > MaxRetryDelay {
		return bad("ttr %v: must be at most %v", s.TTR, MaxRetryDelay)
	}
	if len(s.Body) > MaxScheduleBody {
		return bad("body of %d bytes: at most %d", len(s.Body), MaxScheduleBody)
	}
	return nil
}

// checkName is "" for a valid tube name (the protocol's rules), else what is wrong with it.
func checkName(name string) string {
	if name == "" || len(name) > MaxPolicyTubeLen {
		return fmt.Sprintf("must be 1..%d characters", MaxPolicyTubeLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-+/;.$_()", c) >= 0) {
			return fmt.Sprintf("%q: %q is not a tube name character", name, c)
		}
	}
	if name[0] == '-' {
		return fmt.Sprintf("%q starts with '-'", name)
	}
	return ""
}

// cron parses s.Cron in s.Timezone. Time zones are given by Timezone only, so that a schedule
// has one way of saying it; @every is the Every field's job, whose ticks are aligned.
func (s Schedule) cron() (cron.Schedule, error) {
	spec := strings.TrimSpace(s.Cron)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, fmt.Errorf("cron %q: give the time zone as timezone, not in the expression", s.Cron)
	}
	if strings.HasPrefix(spec, "@every") {
		return nil, fmt.Errorf("cron %q: give an interval as every, not @every", s.Cron)
	}
	loc := time.UTC
	if s.Timezone != "" {
		var err error
		if loc, err = time.LoadLocation(s.Timezone); err != nil {
			return nil, fmt.Errorf("timezone %q: %v", s.Timezone, err)
		}
	}
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %v (a standard cron expression has 5 fields: minute hour day-of-month month day-of-week)", s.Cron, err)
	}
	spec2, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("cron %q: not a calendar expression", s.Cron)
	}
	spec2.Location = loc
	if spec2.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("cron %q: matches no date", s.Cron)
	}
	return spec2, nil
}

// SameTiming reports whether s and o tick at the same times.
func (s Schedule) SameTiming(o Schedule) bool {
	return s.Cron == o.Cron && s.Timezone == o.Timezone && s.Every == o.Every
}

// NextTick is the first tick of s after t (zero if there is none: s does not validate).
func (s Schedule) NextTick(t time.Time) time.Time {
	if s.Every > 0 {
		return t.Truncate(s.Every).Add(s.Every)
	}
	c, err := s.cron()
	if err != nil {
		return time.Time{}
	}
	return c.Next(t)
}

// lookBack are the windows LatestTick searches, shortest first, so that a frequent schedule
// steps through few ticks and a rare one is still found: cron's ticks are at most ~4 years apart.
var lookBack = []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour,
	367 * 24 * time.Hour, 5 * 367 * 24 * time.Hour}

// LatestTick is the latest tick of s at or before now that is after after; zero when there is
// none. It is the one tick a scheduler fires, however many were missed since after.
func (s Schedule) LatestTick(after, now time.Time) time.Time {
	if !after.Before(now) {
		return time.Time{}
	}
	if s.Every > 0 {
		t := now.Truncate(s.Every)
		if t.After(after) {
			return t
		}
		return time.Time{}
	}
	c, err := s.cron()
	if err != nil {
		return time.Time{}
	}
	for _, w := range lookBack {
		from := now.Add(-w)
		last := from.Before(after)
		if last {
			from = after
		}
		var latest time.Time
		for t := c.Next(from); !t.IsZero() && !t.After(now); t = c.Next(t) {
			latest = t
		}
		if !latest.IsZero() || last {
			return latest
		}
	}
	return time.Time{}
}

// SortSchedules sorts ss by name, the order ListSchedules returns.
func SortSchedules(ss []ScheduleState) {
	slices.SortFunc(ss, func(a, b ScheduleState) int { return strings.Compare(a.Name, b.Name) })
}
