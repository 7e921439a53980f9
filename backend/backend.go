// Package backend defines the seam between the beanstalk protocol gateway and the stores that
// keep jobs: the Backend interface, its value types and its sentinel errors.
//
// Backend states everything a store must do, and every store (memory, Redis, PostgreSQL) does
// all of it, as each asserts with var _ backend.Backend: the protocol's calls, a reserve that
// waits without blocking its caller (StartReserve), and what an operator's tools ask beyond the
// protocol (Admin). There is no optional interface, so a decorator — the metrics' — wraps a
// store whole and hides nothing, and no caller asks a store what it can do. Where a store has
// nothing to do, its answer is trivial and correct:
//   - a store kept in a server waits inside Reserve; its StartReserve is StartBlockingReserve,
//     which runs that Reserve on a goroutine of its own, and its InProcess is false;
//   - the memory store is always reachable: its Ping answers nil;
//   - a store that keeps no binlog (Redis, PostgreSQL, memory without one) reports no binlog
//     figures and has no syncs to observe (NoBinlog);
//   - a store whose reservations are as durable as its puts (memory, Redis) never loses one
//     alone: it has no lost reservations to report (ObserveLostReservations does nothing).
//
// Protocol policy (name rules, the line limit, job size, TTR 0 → 1, argument ranges, the watch
// list's NOT_IGNORED rule) lives in the gateway, once. A backend only stores and fetches: every
// argument it receives has already been validated.
package backend

import (
	"context"
	"time"
)

// DefaultTube always exists, even when unused and empty.
const DefaultTube = "default"

// DeadlineSoonMargin is the last stretch of a reservation's TTR during which a reserve by the
// owning session answers ErrDeadlineSoon instead of waiting (beanstalkd's safety margin).
const DeadlineSoonMargin = time.Second

// UrgentPriority: ready jobs with a priority below it count as "urgent" in stats.
const UrgentPriority = 1024

// Backend stores jobs and tubes. Every method is safe for concurrent use by many sessions. Each
// one that reaches the jobs takes a context first and honours its cancellation, and returns
// either nil, one of the sentinel errors named in its contract, or an infrastructure error
// (wrapped), which the gateway answers with INTERNAL_ERROR.
//
// Many gateway processes may share one store (Redis, Postgres); all job and tube state lives in
// the backend, so that any gateway can serve any command. Sessions are identified by SessionID,
// unique across processes.
type Backend interface {
	Admin

	// BeginSession registers a new session, which uses and watches DefaultTube, with what info
	// says of its client (kept with the session, for the jobs' histories: who acts is then known
	// to the store without an argument on every call). It must be called before the session's
	// first other call.
	BeginSession(ctx context.Context, s SessionID, info SessionInfo) error

	// EndSession forgets a session: its reserved jobs return to ready at once (counters
	// unchanged, as when a beanstalkd client disconnects), its tube references are dropped (tubes
	// left empty and unreferenced vanish). A Reserve of the session still waiting in this
	// process ends with an error (no job is handed to a session that has ended). Ending an
	// unknown session is not an error.
	EndSession(ctx context.Context, s SessionID) error

	// UseTube makes tube the session's used tube, creating the tube if needed and dropping the
	// session's reference to its previous used tube.
	UseTube(ctx context.Context, s SessionID, tube string) error

	// WatchTube adds tube to the session's watch list (a no-op if already there), creating it if
	// needed.
	WatchTube(ctx context.Context, s SessionID, tube string) error

	// IgnoreTube removes tube from the session's watch list; a tube not watched is a no-op. The
	// gateway guarantees it never empties the watch list.
	IgnoreTube(ctx context.Context, s SessionID, tube string) error

	// Put stores a new job in p.Tube: delayed when p.Delay > 0, else ready (and handed to a
	// waiting reserve if there is one). It returns the job's id, unique across the store and
	// increasing.
	Put(ctx context.Context, p PutParams) (uint64, error)

	// PutBatch stores the jobs of ps as that many Puts in turn would: their ids increase in
	// slice order. It answers each job alone, in a slice as long as ps. A store may commit them
	// together (one round trip, one flush to disk): a client's pipelined puts then cost one
	// commit, not one each. PutEach is the plain loop, for stores that gain nothing from it.
	PutBatch(ctx context.Context, ps []PutParams) []PutResult

	// Reserve reserves for p.Session the ready job with the lowest (priority, id) over p.Tubes,
	// skipping paused tubes. With none ready it waits up to p.Timeout (0: do not wait; negative:
	// wait until ctx ends) and returns ErrTimedOut. If the session holds a reservation within
	// DeadlineSoonMargin of its deadline and nothing is ready in its watched tubes (or that
	// margin begins while it waits), it returns ErrDeadlineSoon. When ctx ends first it returns
	// ctx.Err().
	Reserve(ctx context.Context, p ReserveParams) (*Job, error)

	// StartReserve is Reserve that does not block its caller. It returns Reserve's outcome — a
	// job, or an error — when it has it at once, as it always has with p.Timeout == 0; else a
	// PendingReserve (a store that asks a server for the job returns one whenever the reserve
	// may wait). deliver is then called exactly once with the outcome — a job, ErrTimedOut,
	// ErrDeadlineSoon, ctx's error or a failing store's — unless Cancel gives the wait up
	// first. The caller keeps ctx live until then: a store may wait through it.
	// deliver is called from any goroutine, with no store lock held, and must not call the
	// store or block for long: the goroutine that calls it may be serving another client (the
	// memory store calls it from the call that made a job ready, a put say, so that the gateway
	// answers the waiting client from there).
	StartReserve(ctx context.Context, p ReserveParams, deliver func(*Job, error)) (*Job, PendingReserve, error)

	// ReserveJob reserves job id for s if it is ready, delayed or buried, in any tube, paused or
	// not. ErrNotFound if it does not exist or is already reserved (by anyone).
	ReserveJob(ctx context.Context, s SessionID, id uint64) (*Job, error)

	// Delete removes job id if it is ready, delayed, buried, or reserved by s. ErrNotFound
	// otherwise (including a job reserved by another session).
	Delete(ctx context.Context, s SessionID, id uint64) error

	// Release returns a job reserved by p.Session to ready (p.Delay == 0) or delayed, with a new
	// priority. ErrNotFound unless the job is reserved by p.Session.
	Release(ctx context.Context, p ReleaseParams) error

	// Bury moves a job reserved by s to the end of its tube's buried list, with a new priority.
	// ErrNotFound unless the job is reserved by s.
	Bury(ctx context.Context, s SessionID, id uint64, priority uint32) error

	// Touch resets the deadline of a job reserved by s to now + its TTR. ErrNotFound unless the
	// job is reserved by s.
	Touch(ctx context.Context, s SessionID, id uint64) error

	// Kick moves up to bound jobs of tube to ready: buried ones (oldest first) if the tube has
	// any, else delayed ones (soonest first); never both. It returns how many moved; a tube that
	// does not exist kicks 0.
	Kick(ctx context.Context, tube string, bound uint64) (uint64, error)

	// KickJob moves one buried or delayed job to ready. ErrNotFound for any other state.
	KickJob(ctx context.Context, id uint64) error

	// Peek returns job id in whatever state. ErrNotFound if it does not exist.
	Peek(ctx context.Context, id uint64) (*Job, error)

	// PeekState returns the job of tube that is next in state: Ready (what a reserve would get,
	// paused or not), Delayed (the soonest due) or Buried (the oldest). ErrNotFound if there is
	// none or the tube does not exist.
	PeekState(ctx context.Context, tube string, state State) (*Job, error)

	// JobStats describes job id. ErrNotFound if it does not exist.
	JobStats(ctx context.Context, id uint64) (*JobStats, error)

	// TubeStats describes tube. ErrNotFound if it does not exist.
	TubeStats(ctx context.Context, tube string) (*TubeStats, error)

	// Stats returns the store-wide figures.
	Stats(ctx context.Context) (*Stats, error)

	// ListTubes names every existing tube.
	ListTubes(ctx context.Context) ([]string, error)

	// PauseTube stops reserves from taking jobs from tube for d; d == 0 unpauses at once.
	// ErrNotFound if the tube does not exist.
	PauseTube(ctx context.Context, tube string, d time.Duration) error

	// InProcess reports whether the store answers every call from this process's memory,
	// waiting on nothing but its own locks (a reserve with a timeout waits for a job, bounded by
	// that timeout): the gateway then bounds no call with a timeout of its own, since a timer
	// and a context per command would cost more than the call.
	InProcess() bool

	// ObserveLostReservations has f called, from any goroutine, with the sessions whose
	// reservations (or touches) the store acknowledged but may have forgotten: a store that
	// commits them without waiting for them to be durable calls it when its server may have
	// crashed or been replaced, before it hands anything out there. A forgotten reservation's
	// job is ready again while its worker believes it holds it; the gateway closes those
	// sessions' connections, which ends them as a disconnect does, so that the worker cannot
	// go on with the job once another may have it. f must not call the store or block. Each
	// call adds an observer.
	ObserveLostReservations(f func([]SessionID))

	// Close releases the backend's resources. Sessions still open are not ended.
	Close() error
}

// PutParams are the arguments of Backend.Put.
type PutParams struct {
	Session  SessionID // the producer; informational
	Tube     string
	Priority uint32
	Delay    time.Duration
	TTR      time.Duration // >= 1s, as the gateway guarantees
	Body     []byte        // owned by the backend after the call
}

// PutResult is one job's answer from Backend.PutBatch: its id, or the error Put would return.
type PutResult struct {
	ID  uint64
	Err error
}

// PutEach is PutBatch as a loop of b.Put.
func PutEach(ctx context.Context, b Backend, ps []PutParams) []PutResult {
	res := make([]PutResult, len(ps))
	for i, p := range ps {
		res[i].ID, res[i].Err = b.Put(ctx, p)
	}
	return res
}

// ReserveParams are the arguments of Backend.Reserve.
type ReserveParams struct {
	Session SessionID
	// Tubes is the session's watch list, as last told to WatchTube/IgnoreTube; passed so that a
	// backend need not look it up.
	Tubes []string
	// Timeout: 0 means try once, negative means wait until ctx ends.
	Timeout time.Duration
}

// ReleaseParams are the arguments of Backend.Release.
type ReleaseParams struct {
	Session  SessionID
	ID       uint64
	Priority uint32
	Delay    time.Duration
}
