package ops

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/backend"
)

// backendOps are the Backend methods measured, in op order; their label is the name.
var backendOps = []string{
	"begin_session", "end_session", "use_tube", "watch_tube", "ignore_tube", "put", "reserve",
	"reserve_wait", "reserve_job", "delete", "release", "bury", "touch", "kick", "kick_job",
	"peek", "peek_state", "job_stats", "tube_stats", "stats", "list_tubes", "pause_tube", "ping",
	"ready_ages", "list_jobs", "delete_jobs", "move_jobs", "job_holder", "import", "job_history",
}

const (
	opBeginSession = iota
	opEndSession
	opUseTube
	opWatchTube
	opIgnoreTube
	opPut
	opReserve
	opReserveWait // a reserve allowed to wait (timeout != 0): its time includes the wait
	opReserveJob
	opDelete
	opRelease
	opBury
	opTouch
	opKick
	opKickJob
	opPeek
	opPeekState
	opJobStats
	opTubeStats
	opStats
	opListTubes
	opPauseTube
	opPing      // the readiness probe's
	opReadyAges // the scrape's, for beangate_store_tube_ready_age_seconds
	opListJobs  // the console's, as are the four below
	opDeleteJobs
	opMoveJobs
	opJobHolder
	opImport
	opJobHistory
)

// backendCalls holds the per-operation series, resolved once.
type backendCalls struct {
	durations []prometheus.Observer
	errors    []prometheus.Counter
}

func newBackendCalls(reg prometheus.Registerer) *backendCalls {
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "beangate_backend_call_duration_seconds",
		Help:    "Time of each call into the job store, by operation (reserve_wait includes the wait).",
		Buckets: commandBuckets,
	}, []string{"op"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "beangate_backend_call_errors_total",
		Help: "Calls into the job store that failed (the store unreachable or too slow: INTERNAL_ERROR), by operation.",
	}, []string{"op"})
	reg.MustRegister(dur, errs)
	c := &backendCalls{}
	for _, op := range backendOps {
		c.durations = append(c.durations, dur.WithLabelValues(op))
		c.errors = append(c.errors, errs.WithLabelValues(op))
	}
	return c
}

// done records a call of op that began at began and ended with err. Sentinel errors are
// answers, and a cancelled context is the client leaving: neither is a store error.
func (c *backendCalls) done(op int, began time.Time, err error) {
	c.durations[op].Observe(time.Since(began).Seconds())
	if err != nil && !isAnswer(err) {
		c.errors[op].Inc()
	}
}

func isAnswer(err error) bool {
	return errors.Is(err, backend.ErrNotFound) || errors.Is(err, backend.ErrTimedOut) ||
		errors.Is(err, backend.ErrDeadlineSoon) || errors.Is(err, backend.ErrBuried) ||
		errors.Is(err, context.Canceled)
}

// InstrumentBackend wraps b so that every call into it is measured on reg. A reserve allowed to
// wait is measured until its outcome, delivered or returned (reserve_wait); one that StartReserve
// gives up at the caller's Cancel (its client left) is not measured.
func InstrumentBackend(b backend.Backend, reg prometheus.Registerer) backend.Backend {
	return &instrumented{b: b, m: newBackendCalls(reg)}
}

type instrumented struct {
	b backend.Backend
	m *backendCalls
}

func (i *instrumented) InProcess() bool { return i.b.InProcess() }

func (i *instrumented) Ping(ctx context.Context) error {
	t := time.Now()
	err := i.b.Ping(ctx)
	i.m.done(opPing, t, err)
	return err
}

func (i *instrumented) ReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error) {
	t := time.Now()
	ages, err := i.b.ReadyAges(ctx, tubes)
	i.m.done(opReadyAges, t, err)
	return ages, err
}

func (i *instrumented) ListJobs(ctx context.Context, p backend.ListParams) (*backend.JobPage, error) {
	t := time.Now()
	page, err := i.b.ListJobs(ctx, p)
	i.m.done(opListJobs, t, err)
	return page, err
}

func (i *instrumented) DeleteJobs(ctx context.Context, tube string, state backend.State, limit int) (int, error) {
	t := time.Now()
	n, err := i.b.DeleteJobs(ctx, tube, state, limit)
	i.m.done(opDeleteJobs, t, err)
	return n, err
}

func (i *instrumented) MoveJobs(ctx context.Context, from, to string, state backend.State, limit int) (int, error) {
	t := time.Now()
	n, err := i.b.MoveJobs(ctx, from, to, state, limit)
	i.m.done(opMoveJobs, t, err)
	return n, err
}

func (i *instrumented) JobHolder(ctx context.Context, id uint64) (backend.SessionID, error) {
	t := time.Now()
	s, err := i.b.JobHolder(ctx, id)
	i.m.done(opJobHolder, t, err)
	return s, err
}

func (i *instrumented) Import(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	t := time.Now()
	out, err := i.b.Import(ctx, jobs)
	i.m.done(opImport, t, err)
	return out, err
}

// BinlogFigures, ObserveBinlogSyncs and ObserveLostReservations are not calls into the store's
// data: they pass through.
func (i *instrumented) BinlogFigures() (backend.BinlogFigures, bool) { return i.b.BinlogFigures() }

func (i *instrumented) ObserveBinlogSyncs(f func(time.Duration)) { i.b.ObserveBinlogSyncs(f) }

func (i *instrumented) ObserveLostReservations(f func([]backend.SessionID)) {
	i.b.ObserveLostReservations(f)
}

func (i *instrumented) JobHistory(ctx context.Context, id uint64) ([]backend.JobEvent, error) {
	t := time.Now()
	h, err := i.b.JobHistory(ctx, id)
	i.m.done(opJobHistory, t, err)
	return h, err
}

func (i *instrumented) BeginSession(ctx context.Context, s backend.SessionID, info backend.SessionInfo) error {
	t := time.Now()
	err := i.b.BeginSession(ctx, s, info)
	i.m.done(opBeginSession, t, err)
	return err
}

func (i *instrumented) EndSession(ctx context.Context, s backend.SessionID) error {
	t := time.Now()
	err := i.b.EndSession(ctx, s)
	i.m.done(opEndSession, t, err)
	return err
}

func (i *instrumented) UseTube(ctx context.Context, s backend.SessionID, tube string) error {
	t := time.Now()
	err := i.b.UseTube(ctx, s, tube)
	i.m.done(opUseTube, t, err)
	return err
}

func (i *instrumented) WatchTube(ctx context.Context, s backend.SessionID, tube string) error {
	t := time.Now()
	err := i.b.WatchTube(ctx, s, tube)
	i.m.done(opWatchTube, t, err)
	return err
}

func (i *instrumented) IgnoreTube(ctx context.Context, s backend.SessionID, tube string) error {
	t := time.Now()
	err := i.b.IgnoreTube(ctx, s, tube)
	i.m.done(opIgnoreTube, t, err)
	return err
}

func (i *instrumented) Put(ctx context.Context, p backend.PutParams) (uint64, error) {
	t := time.Now()
	id, err := i.b.Put(ctx, p)
	i.m.done(opPut, t, err)
	return id, err
}

// PutBatch counts as one put per job, each taking the batch's time.
func (i *instrumented) PutBatch(ctx context.Context, ps []backend.PutParams) []backend.PutResult {
	t := time.Now()
	res := i.b.PutBatch(ctx, ps)
	for _, r := range res {
		i.m.done(opPut, t, r.Err)
	}
	return res
}

func reserveOp(timeout time.Duration) int {
	if timeout != 0 {
		return opReserveWait
	}
	return opReserve
}

func (i *instrumented) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	t := time.Now()
	j, err := i.b.Reserve(ctx, p)
	i.m.done(reserveOp(p.Timeout), t, err)
	return j, err
}

func (i *instrumented) ReserveJob(ctx context.Context, s backend.SessionID, id uint64) (*backend.Job, error) {
	t := time.Now()
	j, err := i.b.ReserveJob(ctx, s, id)
	i.m.done(opReserveJob, t, err)
	return j, err
}

func (i *instrumented) Delete(ctx context.Context, s backend.SessionID, id uint64) error {
	t := time.Now()
	err := i.b.Delete(ctx, s, id)
	i.m.done(opDelete, t, err)
	return err
}

func (i *instrumented) Release(ctx context.Context, p backend.ReleaseParams) error {
	t := time.Now()
	err := i.b.Release(ctx, p)
	i.m.done(opRelease, t, err)
	return err
}

func (i *instrumented) Bury(ctx context.Context, s backend.SessionID, id uint64, pri uint32) error {
	t := time.Now()
	err := i.b.Bury(ctx, s, id, pri)
	i.m.done(opBury, t, err)
	return err
}

func (i *instrumented) Touch(ctx context.Context, s backend.SessionID, id uint64) error {
	t := time.Now()
	err := i.b.Touch(ctx, s, id)
	i.m.done(opTouch, t, err)
	return err
}

func (i *instrumented) Kick(ctx context.Context, tube string, bound uint64) (uint64, error) {
	t := time.Now()
	n, err := i.b.Kick(ctx, tube, bound)
	i.m.done(opKick, t, err)
	return n, err
}

func (i *instrumented) KickJob(ctx context.Context, id uint64) error {
	t := time.Now()
	err := i.b.KickJob(ctx, id)
	i.m.done(opKickJob, t, err)
	return err
}

func (i *instrumented) Peek(ctx context.Context, id uint64) (*backend.Job, error) {
	t := time.Now()
	j, err := i.b.Peek(ctx, id)
	i.m.done(opPeek, t, err)
	return j, err
}

func (i *instrumented) PeekState(ctx context.Context, tube string, state backend.State) (*backend.Job, error) {
	t := time.Now()
	j, err := i.b.PeekState(ctx, tube, state)
	i.m.done(opPeekState, t, err)
	return j, err
}

func (i *instrumented) JobStats(ctx context.Context, id uint64) (*backend.JobStats, error) {
	t := time.Now()
	st, err := i.b.JobStats(ctx, id)
	i.m.done(opJobStats, t, err)
	return st, err
}

func (i *instrumented) TubeStats(ctx context.Context, tube string) (*backend.TubeStats, error) {
	t := time.Now()
	st, err := i.b.TubeStats(ctx, tube)
	i.m.done(opTubeStats, t, err)
	return st, err
}

func (i *instrumented) Stats(ctx context.Context) (*backend.Stats, error) {
	t := time.Now()
	st, err := i.b.Stats(ctx)
	i.m.done(opStats, t, err)
	return st, err
}

func (i *instrumented) ListTubes(ctx context.Context) ([]string, error) {
	t := time.Now()
	names, err := i.b.ListTubes(ctx)
	i.m.done(opListTubes, t, err)
	return names, err
}

func (i *instrumented) PauseTube(ctx context.Context, tube string, d time.Duration) error {
	t := time.Now()
	err := i.b.PauseTube(ctx, tube, d)
	i.m.done(opPauseTube, t, err)
	return err
}

func (i *instrumented) Close() error { return i.b.Close() }

func (i *instrumented) StartReserve(ctx context.Context, p backend.ReserveParams, deliver func(*backend.Job, error)) (*backend.Job, backend.PendingReserve, error) {
	t := time.Now()
	op := reserveOp(p.Timeout)
	j, pending, err := i.b.StartReserve(ctx, p, func(j *backend.Job, err error) {
		i.m.done(op, t, err)
		deliver(j, err)
	})
	if pending == nil {
		i.m.done(op, t, err)
	}
	return j, pending, err
}

// The policy calls are an operator's, rare: they pass through unmeasured.
func (i *instrumented) SetPolicy(ctx context.Context, p backend.Policy) error {
	return i.b.SetPolicy(ctx, p)
}

func (i *instrumented) Policy(ctx context.Context, pattern string) (backend.Policy, error) {
	return i.b.Policy(ctx, pattern)
}

func (i *instrumented) ListPolicies(ctx context.Context) ([]backend.Policy, error) {
	return i.b.ListPolicies(ctx)
}

func (i *instrumented) ClearPolicy(ctx context.Context, pattern string) error {
	return i.b.ClearPolicy(ctx, pattern)
}

func (i *instrumented) ObservePolicyActions(f func(backend.PolicyAction)) {
	i.b.ObservePolicyActions(f)
}

// The schedule calls are an operator's and the scheduler's, a few a second: they pass through
// unmeasured.
func (i *instrumented) SetSchedule(ctx context.Context, s backend.Schedule) error {
	return i.b.SetSchedule(ctx, s)
}

func (i *instrumented) ListSchedules(ctx context.Context) ([]backend.ScheduleState, error) {
	return i.b.ListSchedules(ctx)
}

func (i *instrumented) ClearSchedule(ctx context.Context, name string) error {
	return i.b.ClearSchedule(ctx, name)
}

func (i *instrumented) FireSchedule(ctx context.Context, name string, tick time.Time) (uint64, bool, error) {
	return i.b.FireSchedule(ctx, name, tick)
}
