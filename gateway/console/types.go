package console

import (
	"math"
	"time"

	"github.com/beangate/beangate/backend"
)

// The JSON of /api/, shared by the page and `beangate ctl` (which decodes these same types).
// Durations are in seconds.

// Info is GET /api/info: what the page needs to start.
type Info struct {
	Backend   string `json:"backend"`
	Namespace string `json:"namespace,omitempty"`
	Store     string `json:"store,omitempty"`
	Gateway   string `json:"gateway,omitempty"`
	Version   string `json:"version,omitempty"`
	// ReadOnly tells that every action is refused: --console-read-only, or no authentication
	// configured. ReadOnlyReason says which, for the page to show.
	ReadOnly       bool   `json:"read_only"`
	ReadOnlyReason string `json:"read_only_reason,omitempty"`
	// CSRF is the token every action must carry in the X-CSRF-Token header; empty when
	// actions are refused.
	CSRF string `json:"csrf"`
}

// Tube is one tube's figures: its stats-tube, this process's waiting reserves, and the rates
// of the last second.
type Tube struct {
	Name          string  `json:"name"`
	Urgent        uint64  `json:"urgent"`
	Ready         uint64  `json:"ready"`
	Reserved      uint64  `json:"reserved"`
	Delayed       uint64  `json:"delayed"`
	Buried        uint64  `json:"buried"`
	Total         uint64  `json:"total"`
	Using         uint64  `json:"using"`
	Watching      uint64  `json:"watching"`
	Waiting       int64   `json:"waiting"`
	Deletes       uint64  `json:"deletes"`
	Pauses        uint64  `json:"pauses"`
	Pause         float64 `json:"pause"`
	PauseLeft     float64 `json:"pause_left"`
	PutsPerSec    float64 `json:"puts_per_sec"`
	DeletesPerSec float64 `json:"deletes_per_sec"`
}

// Overview is GET /api/overview: the store's totals and every tube (up to a cap), as sampled
// at most a second ago.
type Overview struct {
	At        time.Time `json:"at"`
	Ready     uint64    `json:"ready"`
	Reserved  uint64    `json:"reserved"`
	Delayed   uint64    `json:"delayed"`
	Buried    uint64    `json:"buried"`
	Total     uint64    `json:"total"`
	Tubes     []Tube    `json:"tubes"`
	Truncated bool      `json:"truncated"` // more tubes exist than are shown
}

// Job is a job's stats-job and its body (a page's jobs carry only the start of theirs).
type Job struct {
	ID       uint64  `json:"id"`
	Tube     string  `json:"tube"`
	State    string  `json:"state"`
	Priority uint32  `json:"pri"`
	Age      float64 `json:"age"`
	Delay    float64 `json:"delay"`
	TTR      float64 `json:"ttr"`
	TimeLeft float64 `json:"time_left"`
	Reserves uint32  `json:"reserves"`
	Timeouts uint32  `json:"timeouts"`
	Releases uint32  `json:"releases"`
	Buries   uint32  `json:"buries"`
	Kicks    uint32  `json:"kicks"`
	BodySize int     `json:"body_size"`
	Body     []byte  `json:"body"` // base64 in JSON
	// Holder is the session holding a reserved job (job page only, when the store tells);
	// HolderGateway is its gateway process, HolderHere whether that is this gateway.
	Holder        string `json:"holder,omitempty"`
	HolderGateway string `json:"holder_gateway,omitempty"`
	HolderHere    bool   `json:"holder_here,omitempty"`
	// Events is the job's history, oldest first (job page only; empty when its tube keeps none).
	Events []Event `json:"events,omitempty"`
}

// Event is one event of a job's history (backend.JobEvent): when, what, the connection that
// acted or held the job and its client's address, the delay asked for or given, the policy
// that acted.
type Event struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Session string    `json:"session,omitempty"`
	Addr    string    `json:"addr,omitempty"`
	Delay   float64   `json:"delay,omitempty"` // seconds
	Policy  string    `json:"policy,omitempty"`
}

// EventsOf converts a store's history.
func EventsOf(h []backend.JobEvent) []Event {
	out := make([]Event, len(h))
	for i, e := range h {
		out[i] = Event{At: e.At.UTC(), Kind: string(e.Kind), Session: string(e.Session), Addr: e.Addr,
			Delay: secs(e.Delay), Policy: e.Policy}
	}
	return out
}

// Page is GET /api/jobs: one page of a tube's jobs in a state, and the cursor of the next.
type Page struct {
	Tube  string `json:"tube"`
	State string `json:"state"`
	Jobs  []Job  `json:"jobs"`
	Next  string `json:"next,omitempty"`
}

// History is GET /api/history: a tube's last hour, one value per second, oldest first.
type History struct {
	Tube    string    `json:"tube"`
	End     time.Time `json:"end"`
	Ready   []uint32  `json:"ready"`
	Puts    []uint32  `json:"puts"`
	Deletes []uint32  `json:"deletes"`
}

// Action is the body of every POST /api/…; each action reads the fields it needs.
type Action struct {
	Tube    string  `json:"tube,omitempty"`
	To      string  `json:"to,omitempty"`
	State   string  `json:"state,omitempty"` // flush, move: one state; empty: ready, delayed and buried
	ID      uint64  `json:"id,omitempty"`
	Bound   uint64  `json:"bound,omitempty"`
	Seconds float64 `json:"seconds,omitempty"`
	Body    string  `json:"body,omitempty"`
	Pri     uint32  `json:"pri,omitempty"`
	Delay   float64 `json:"delay,omitempty"`
	TTR     float64 `json:"ttr,omitempty"`
	Policy  *Policy `json:"policy,omitempty"` // POST /api/policy
	// Schedule is POST /api/schedule's; Name POST /api/schedule-clear's.
	Schedule *Schedule `json:"schedule,omitempty"`
	Name     string    `json:"name,omitempty"`
}

// Policy is one tube policy (see docs/policies.md): the keys of the config's policies:
// section, with durations (expire_after, retry_delay, retry_delay_max) in seconds. A zero field
// sets no limit.
type Policy struct {
	Tube         string  `json:"tube"`
	MaxReserves  uint32  `json:"max_reserves,omitempty"`
	ExpireAfter  float64 `json:"expire_after,omitempty"`
	ExpireAction string  `json:"expire_action,omitempty"`
	MaxReserved  uint32  `json:"max_reserved,omitempty"`
	Rate         float64 `json:"rate,omitempty"`
	Burst        uint32  `json:"burst,omitempty"`
	Unique       bool    `json:"unique,omitempty"`
	RetryDelay   float64 `json:"retry_delay,omitempty"`
	RetryMax     float64 `json:"retry_delay_max,omitempty"`
	History      bool    `json:"history,omitempty"`
}

// Policies is GET /api/policies: every policy, by tube pattern.
type Policies struct {
	Policies []Policy `json:"policies"`
}

// TubePolicy is GET /api/policy?tube=NAME: the policy keyed NAME exactly, if any, and the one
// that governs a tube of that name (the most specific match), if any.
type TubePolicy struct {
	Policy    *Policy `json:"policy,omitempty"`
	Governing *Policy `json:"governing,omitempty"`
}

// PolicyOf converts a store policy.
func PolicyOf(p backend.Policy) Policy {
	return Policy{
		Tube: p.Tube, MaxReserves: p.MaxReserves, ExpireAfter: secs(p.ExpireAfter),
		ExpireAction: string(p.ExpireAction), MaxReserved: p.MaxReserved, Rate: p.Rate,
		Burst: p.Burst, Unique: p.Unique, RetryDelay: secs(p.RetryDelay), RetryMax: secs(p.RetryDelayMax),
		History: p.History,
	}
}

// Backend converts p for the store.
func (p Policy) Backend() backend.Policy {
	return backend.Policy{
		Tube: p.Tube, MaxReserves: p.MaxReserves, ExpireAfter: duration(p.ExpireAfter),
		ExpireAction: backend.ExpireAction(p.ExpireAction), MaxReserved: p.MaxReserved, Rate: p.Rate,
		Burst: p.Burst, Unique: p.Unique, RetryDelay: duration(p.RetryDelay), RetryDelayMax: duration(p.RetryMax),
		History: p.History,
	}
}

// Schedule is one periodic job (see docs/schedules.md): the keys of the config's schedules:
// section, with durations (every, ttr, delay) in seconds; and, as GET /api/schedules shows it,
// its last run (the tick claimed, the job put and when) and its next.
type Schedule struct {
	Name     string  `json:"name"`
	Tube     string  `json:"tube"`
	Cron     string  `json:"cron,omitempty"`
	Timezone string  `json:"timezone,omitempty"`
	Every    float64 `json:"every,omitempty"`
	Body     string  `json:"body"`
	Priority *uint32 `json:"priority,omitempty"` // 1024 when unset
	TTR      float64 `json:"ttr,omitempty"`      // 60 when unset
	Delay    float64 `json:"delay,omitempty"`

	LastTick *time.Time `json:"last_tick,omitempty"`
	LastRun  *time.Time `json:"last_run,omitempty"`
	LastJob  uint64     `json:"last_job,omitempty"`
	NextRun  *time.Time `json:"next_run,omitempty"`
}

// Schedules is GET /api/schedules: every schedule, by name.
type Schedules struct {
	Schedules []Schedule `json:"schedules"`
}

// The defaults of a schedule's job, as the config's are.
const (
	defaultSchedulePriority = 1024
	defaultScheduleTTR      = time.Minute
)

// ScheduleOf converts a store schedule, with its next run after now.
func ScheduleOf(s backend.ScheduleState, now time.Time) Schedule {
	pri := s.Priority
	out := Schedule{Name: s.Name, Tube: s.Tube, Cron: s.Cron, Timezone: s.Timezone, Every: secs(s.Every),
		Body: string(s.Body), Priority: &pri, TTR: secs(s.TTR), Delay: secs(s.Delay), LastJob: s.LastJob}
	out.LastTick = &s.LastTick
	if !s.LastRun.IsZero() {
		out.LastRun = &s.LastRun
	}
	if next := s.NextTick(maxTime(now, s.LastTick)); !next.IsZero() {
		next = next.UTC()
		out.NextRun = &next
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Backend converts s for the store.
func (s Schedule) Backend() backend.Schedule {
	out := backend.Schedule{Name: s.Name, Tube: s.Tube, Cron: s.Cron, Timezone: s.Timezone, Every: duration(s.Every),
		Body: []byte(s.Body), Priority: defaultSchedulePriority, TTR: duration(s.TTR), Delay: duration(s.Delay)}
	if s.Priority != nil {
		out.Priority = *s.Priority
	}
	if s.TTR == 0 {
		out.TTR = defaultScheduleTTR
	}
	return out
}

// Result is what an action answers: how many jobs it acted on, or the new job's id.
type Result struct {
	N  uint64 `json:"n"`
	ID uint64 `json:"id,omitempty"`
}

func secs(d time.Duration) float64 { return d.Seconds() }

// duration is s seconds as a Duration; one too long for a Duration saturates, and is then
// refused by the policy's validation rather than wrapped to a negative or small value.
func duration(s float64) time.Duration {
	if s >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

func tubeOf(ts *backend.TubeStats) Tube {
	return Tube{
		Name: ts.Name, Urgent: ts.UrgentJobs, Ready: ts.ReadyJobs, Reserved: ts.ReservedJobs,
		Delayed: ts.DelayedJobs, Buried: ts.BuriedJobs, Total: ts.TotalJobs, Using: ts.Using,
		Watching: ts.Watching, Deletes: ts.CmdDelete, Pauses: ts.CmdPauseTube,
		Pause: secs(ts.Pause), PauseLeft: secs(ts.PauseTimeLeft),
	}
}

func jobOf(st *backend.JobStats, size int, body []byte) Job {
	return Job{
		ID: st.ID, Tube: st.Tube, State: st.State.String(), Priority: st.Priority,
		Age: secs(st.Age), Delay: secs(st.Delay), TTR: secs(st.TTR), TimeLeft: secs(st.TimeLeft),
		Reserves: st.Reserves, Timeouts: st.Timeouts, Releases: st.Releases, Buries: st.Buries,
		Kicks: st.Kicks, BodySize: size, Body: body,
	}
}

// ParseState reads a state's name as stats-job prints it.
func ParseState(s string) (backend.State, bool) {
	for _, st := range []backend.State{backend.Ready, backend.Delayed, backend.Reserved, backend.Buried} {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}
