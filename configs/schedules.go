package configs

import (
	"math"
	"time"

	"github.com/beangate/beangate/backend"
)

// Schedule is one entry of the schedules: section, set in the store at start and on SIGHUP
// (see docs/schedules.md). Its keys are those of `beangate ctl schedule set`, with underscores.
type Schedule struct {
	Name     string        `mapstructure:"name"`
	Tube     string        `mapstructure:"tube"`
	Cron     string        `mapstructure:"cron"`     // 5 fields, in UTC unless timezone is given
	Timezone string        `mapstructure:"timezone"` // an IANA zone name, for cron
	Every    time.Duration `mapstructure:"every"`    // or a fixed interval
	Body     string        `mapstructure:"body"`
	Priority *int64        `mapstructure:"priority"` // DefaultSchedulePriority when unset
	TTR      time.Duration `mapstructure:"ttr"`      // DefaultScheduleTTR when unset
	Delay    time.Duration `mapstructure:"delay"`
}

// The defaults of a schedule's job, as beanstalk clients commonly put one.
const (
	DefaultSchedulePriority = 1024
	DefaultScheduleTTR      = time.Minute
)

// Backend is s as the store takes it.
func (s Schedule) Backend() backend.Schedule {
	out := backend.Schedule{Name: s.Name, Tube: s.Tube, Cron: s.Cron, Timezone: s.Timezone, Every: s.Every,
		Body: []byte(s.Body), Priority: DefaultSchedulePriority, TTR: s.TTR, Delay: s.Delay}
	if s.Priority != nil {
		out.Priority = uint32(*s.Priority) // validated: in range
	}
	if out.TTR == 0 {
		out.TTR = DefaultScheduleTTR
	}
	return out
}

// validateSchedules checks every entry as the store would, and that no name appears twice.
func validateSchedules(ss []Schedule, bad func(string, ...any)) {
	seen := map[string]bool{}
	for i, s := range ss {
		if s.Priority != nil && (*s.Priority < 0 || *s.Priority > math.MaxUint32) {
			bad("schedules[%d]: priority %d: must be 0..%d", i, *s.Priority, uint32(math.MaxUint32))
			continue
		}
		if err := s.Backend().Validate(); err != nil {
			bad("schedules[%d]: %v", i, err)
			continue
		}
		if seen[s.Name] {
			bad("schedules[%d]: name %q appears twice", i, s.Name)
		}
		seen[s.Name] = true
	}
}
