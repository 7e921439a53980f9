package backend_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// LatestTick is the one tick a scheduler fires: the latest at or before now and after the last,
// however many were missed; NextTick the first after a time.
func TestScheduleTicks(t *testing.T) {
	t.Parallel()
	hourly := backend.Schedule{Cron: "0 * * * *"}
	paris := backend.Schedule{Cron: "0 9 * * *", Timezone: "Europe/Paris"}
	yearly := backend.Schedule{Cron: "@yearly"}
	every := backend.Schedule{Every: 30 * time.Second}
	tests := []struct {
		name        string
		s           backend.Schedule
		after, now  string
		latest, nxt string // "" for none
	}{
		{"HourlyDue", hourly, "2026-03-01T09:00:00Z", "2026-03-01T10:20:00Z", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z"},
		{"HourlyNotDue", hourly, "2026-03-01T10:00:00Z", "2026-03-01T10:59:59Z", "", "2026-03-01T11:00:00Z"},
		{"HourlyMissedForDaysFiresTheLatestOnly", hourly, "2026-02-20T09:00:00Z", "2026-03-01T10:20:00Z", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z"},
		{"ATickExactlyNowIsDue", hourly, "2026-03-01T09:00:00Z", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z"},
		{"TheLastTickItselfIsDone", hourly, "2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", "", "2026-03-01T11:00:00Z"},
		{"InItsTimezone", paris, "2026-03-01T00:00:00Z", "2026-03-01T12:00:00Z", "2026-03-01T08:00:00Z", "2026-03-02T08:00:00Z"},
		{"InItsTimezoneInSummer", paris, "2026-07-01T00:00:00Z", "2026-07-01T12:00:00Z", "2026-07-01T07:00:00Z", "2026-07-02T07:00:00Z"},
		{"ARareTickMissedLongAgo", yearly, "2025-06-01T00:00:00Z", "2026-11-01T00:00:00Z", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"ARareTickNotDue", yearly, "2026-01-01T00:00:00Z", "2026-11-01T00:00:00Z", "", "2027-01-01T00:00:00Z"},
		{"EveryIsAlignedToItsMultiples", every, "2026-03-01T10:00:00Z", "2026-03-01T10:01:10Z", "2026-03-01T10:01:00Z", "2026-03-01T10:01:30Z"},
		{"EveryNotDue", every, "2026-03-01T10:01:00Z", "2026-03-01T10:01:29Z", "", "2026-03-01T10:01:30Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := time.Time{}
			if tt.latest != "" {
				want = at(tt.latest)
			}
			require.True(t, want.Equal(tt.s.LatestTick(at(tt.after), at(tt.now))), "latest: want %v, got %v", want, tt.s.LatestTick(at(tt.after), at(tt.now)))
			require.True(t, at(tt.nxt).Equal(tt.s.NextTick(at(tt.now))), "next: want %v, got %v", tt.nxt, tt.s.NextTick(at(tt.now)))
		})
	}
}

// A schedule that cannot work is refused with what is wrong.
func TestScheduleValidate(t *testing.T) {
	t.Parallel()
	ok := backend.Schedule{Name: "report", Tube: "reports", Cron: "0 * * * *", TTR: time.Minute}
	require.NoError(t, ok.Validate())
	tests := []struct {
		name string
		edit func(*backend.Schedule)
		want string
	}{
		{"FourFields", func(s *backend.Schedule) { s.Cron = "0 * * *" }, `cron "0 * * *": expected exactly 5 fields, found 4`},
		{"OutOfRange", func(s *backend.Schedule) { s.Cron = "0 25 * * *" }, "above maximum (23)"},
		{"NoDate", func(s *backend.Schedule) { s.Cron = "0 0 30 2 *" }, "matches no date"},
		{"TZInTheExpression", func(s *backend.Schedule) { s.Cron = "CRON_TZ=UTC 0 * * * *" }, "give the time zone as timezone"},
		{"AtEvery", func(s *backend.Schedule) { s.Cron = "@every 1m" }, "give an interval as every"},
		{"UnknownTimezone", func(s *backend.Schedule) { s.Timezone = "Mars/Olympus" }, `timezone "Mars/Olympus"`},
		{"Both", func(s *backend.Schedule) { s.Every = time.Minute }, "both a cron expression and an interval"},
		{"Neither", func(s *backend.Schedule) { s.Cron = "" }, "needs a cron expression or an interval"},
		{"TimezoneWithEvery", func(s *backend.Schedule) { s.Cron, s.Every, s.Timezone = "", time.Minute, "UTC" }, "timezone applies to a cron expression"},
		{"EveryTooShort", func(s *backend.Schedule) { s.Cron, s.Every = "", time.Millisecond }, "must be at least 1s"},
		{"EveryFraction", func(s *backend.Schedule) { s.Cron, s.Every = "", 1500*time.Millisecond }, "whole seconds"},
		{"NoTTR", func(s *backend.Schedule) { s.TTR = 0 }, "ttr 0s: must be at least 1s"},
		{"BadTube", func(s *backend.Schedule) { s.Tube = "a b" }, "tube "},
		{"BadName", func(s *backend.Schedule) { s.Name = "" }, "name must be"},
		{"NegativeDelay", func(s *backend.Schedule) { s.Delay = -time.Second }, "delay -1s"},
		{"BigBody", func(s *backend.Schedule) { s.Body = make([]byte, backend.MaxScheduleBody+1) }, "body of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := ok
			tt.edit(&s)
			err := s.Validate()
			require.ErrorIs(t, err, backend.ErrBadSchedule)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
