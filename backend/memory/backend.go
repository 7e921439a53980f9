// Package memory is the complete in-memory Backend: one process, no persistence. It is the
// reference implementation the gateway tests run against.
//
// All state sits behind one mutex. Time comes only from the Clock: due events (delays maturing,
// TTR expiry, pauses ending, waiting reserves timing out or entering the deadline margin) are
// applied in time order at the start of every operation, and one Clock timer is kept armed for
// the earliest of them so that they also happen when nobody calls.
package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// Options configure a Backend.
type Options struct {
	// Clock is the source of time; nil means backend.SystemClock{}.
	Clock backend.Clock
	// Binlog, when set, makes the store durable in beanstalkd's binlog format (-b); use Open.
	Binlog *binlog.Options
}

// ErrClosed is what every call made after Close fails with (wrapped: errors.Is finds it).
var ErrClosed = errors.New("backend closed")

// opErr is the one translation of the errors the Backend produces (the binlog's, a caller's
// context ending, ErrClosed) into what it returns: sentinels of package backend as they are,
// anything else wrapped as "memory: <op>: <cause>", which the gateway answers INTERNAL_ERROR.
// Only the error path pays for it.
func opErr(op string, err error) error {
	if err == nil || errors.Is(err, backend.ErrNotFound) || errors.Is(err, backend.ErrOutOfMemory) {
		return err
	}
	return fmt.Errorf("memory: %s: %w", op, err)
}

// Backend is the in-memory store. Use New.
type Backend struct {
	clock backend.Clock

	mu       sync.Mutex
	closed   bool
	nextID   uint64
	jobs     jobTable
	tubes    map[string]*tube
	order    []*tube // list-tubes order (see removeTube)
	sessions map[backend.SessionID]*session

	delayed   indexedHeap[*job]    // every delayed job, by (due, id)
	deadlines indexedHeap[*job]    // every reserved job, by (deadline, id)
	paused    indexedHeap[*tube]   // paused tubes, by pause end
	waiters   indexedHeap[*waiter] // waiting reserves with a timeout or a reservation, by wake time

	totalJobs    uint64
	jobTimeouts  uint64
	reservations uint64 // reservations made, numbering them (job.seq)
	buries       uint64 // buries made, numbering them (job.seq)

	timer    backend.Timer // the one event timer; nil when none is armed
	timerAt  time.Time
	timerGen uint64 // tells a stale timer callback from the current one

	deliveries []delivery // outcomes of waits decided under the lock, for unlock to hand out
	reclaim    reclaimer  // collects the garbage a drained burst leaves

	wal    *binlog.Log // nil without a binlog
	walSeq uint64      // what the operation under way must commit (see endWrite)
	walErr error       // a record the operation under way could not place

	pol   policies  // per-tube policies (policy.go)
	sched schedules // periodic jobs (schedule.go)

	imported map[string]uint64 // key -> id of every imported job (Import)

	// hist holds the histories of the jobs of tubes that keep them (history.go), by job id:
	// beside the jobs, not in them, as a job record is kept to one allocation size class.
	hist map[uint64][]backend.JobEvent
	keys *keyFile // the binlog directory's key file; nil without a binlog
}

var _ backend.Backend = (*Backend)(nil)

// replayGCPercent is GOGC while a binlog is replayed.
const replayGCPercent = 400

var replayGC sync.Mutex

// Open returns a Backend; with opts.Binlog set it locks the directory (binlog.ErrLocked if
// another server holds it), replays it and writes every later change to it.
func Open(opts Options) (*Backend, error) {
	b := New(Options{Clock: opts.Clock})
	if opts.Binlog == nil {
		return b, nil
	}
	// A replay allocates every job at once and keeps it: collections on the way free almost
	// nothing and cost a third of the time. What it leaves over (read buffers, jobs replaced
	// or deleted by later records) goes back to the OS at the end.
	replayGC.Lock() // GOGC is the process's: one replay at a time sets and restores it
	defer replayGC.Unlock()
	defer debug.SetGCPercent(debug.SetGCPercent(replayGCPercent))
	defer func() {
		if b != nil && b.jobs.Len() > 0 {
			debug.FreeOSMemory()
		}
	}()
	b.mu.Lock()
	defer b.mu.Unlock()
	sink := newReplaySink(b)
	wal, maxID, err := binlog.Open(*opts.Binlog, sink)
	if err != nil {
		return nil, opErr("open", err)
	}
	b.wal = wal
	if err := sink.finishLocked(b.clock.Now(), maxID); err != nil {
		b.wal = nil
		_ = wal.Close()
		return nil, opErr("open", err)
	}
	if b.keys, err = openKeyFile(wal.Dir(), b.imported); err != nil {
		b.wal = nil
		_ = wal.Close()
		return nil, opErr("open", err)
	}
	if b.pol.file, b.pol.list, err = openPolicyFile(wal.Dir()); err != nil {
		b.wal = nil
		_ = wal.Close()
		return nil, opErr("open", err)
	}
	if len(b.pol.list) > 0 {
		b.applyPoliciesLocked(b.clock.Now())
	}
	if b.sched.file, b.sched.list, err = openScheduleFile(wal.Dir()); err != nil {
		b.wal = nil
		_ = wal.Close()
		return nil, opErr("open", err)
	}
	b.restoreClaimsLocked()
	return b, nil
}

// New returns an empty Backend holding only the default tube, without a binlog (opts.Binlog is
// ignored: see Open).
func New(opts Options) *Backend {
	clock := opts.Clock
	if clock == nil {
		clock = backend.SystemClock{}
	}
	b := &Backend{
		clock:     clock,
		tubes:     make(map[string]*tube),
		sessions:  make(map[backend.SessionID]*session),
		imported:  make(map[string]uint64),
		delayed:   newIndexedHeap(byDue, setGlobalIndex),
		deadlines: newIndexedHeap(byDeadline, setGlobalIndex),
		paused:    newIndexedHeap(byPauseEnd, setPauseIndex),
		waiters:   newIndexedHeap(byWake, setWaiterIndex),
		pol:       policies{seed: maphash.MakeSeed(), expiring: newIndexedHeap(byExpiry, setExpiryIndex)},
	}
	b.reclaim.collect = debug.FreeOSMemory
	b.reclaim.lock = &b.mu
	b.tubeLocked(backend.DefaultTube)
	return b
}

// InProcess reports that no call waits on anything but the lock and, for a Reserve with a
// timeout, its waiter: callers need not bound each call with a timer.
func (b *Backend) InProcess() bool { return true }

// Ping answers nil: a store in the process is always reachable.
func (b *Backend) Ping(context.Context) error { return nil }

// begin starts operation op: it takes the lock and applies every event due by now. On error the
// lock is not held.
func (b *Backend) begin(ctx context.Context, op string) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, opErr(op, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return time.Time{}, opErr(op, ErrClosed)
	}
	now := b.clock.Now()
	b.applyDueLocked(now)
	return now, nil
}

// end finishes an operation begun with begin: it re-arms the event timer and unlocks.
func (b *Backend) end() {
	if b.walSeq != 0 || b.walErr != nil {
		// A policy acted on a due event (a bury, a deletion) and wrote its record: commit it
		// as a write would. A failure is the binlog's, not this operation's.
		var err error
		b.endWrite("policy", &err)
		return
	}
	b.armLocked()
	b.unlock()
}

// unlock releases the lock, then delivers the outcomes of the waits decided while it was held.
// They go out on this goroutine, before the caller's own reply: a gateway answers a waiting
// client from here, so the wake-up latency workers feel is one socket write, not a goroutine
// switch.
func (b *Backend) unlock() {
	ds := b.deliveries
	b.deliveries = nil
	b.mu.Unlock()
	for _, d := range ds {
		d.deliver(d.job, d.err)
	}
}

// session is one client's backend-side state.
type session struct {
	id       backend.SessionID
	addr     string // its client's, for the jobs' histories
	using    *tube
	watching []*tube              // in beanstalkd's order: removal moves the last entry into the gap
	reserved indexedHeap[*job]    // its reserved jobs, by (deadline, id)
	waiters  map[*waiter]struct{} // its blocked Reserve calls (normally at most one); nil until the first
}

// unwatchAt removes watch-list entry i as beanstalkd's arrays do: the last entry fills the gap.
func (s *session) unwatchAt(i int) {
	last := len(s.watching) - 1
	s.watching[i] = s.watching[last]
	s.watching[last] = nil
	s.watching = s.watching[:last]
}

func (b *Backend) sessionLocked(op string, id backend.SessionID) (*session, error) {
	s := b.sessions[id]
	if s == nil {
		return nil, opErr(op, fmt.Errorf("unknown session %q (BeginSession not called)", id))
	}
	return s, nil
}

// BeginSession registers s, using and watching the default tube.
func (b *Backend) BeginSession(ctx context.Context, id backend.SessionID, info backend.SessionInfo) error {
	_, err := b.begin(ctx, "begin session")
	if err != nil {
		return err
	}
	defer b.end()
	if b.sessions[id] != nil {
		return nil // already begun: keep its state
	}
	t := b.tubeLocked(backend.DefaultTube)
	s := &session{
		id:       id,
		addr:     info.Addr,
		using:    t,
		watching: []*tube{t},
		reserved: newIndexedHeap(byDeadline, setTubeIndex),
	}
	t.using++
	t.watching++
	b.sessions[id] = s
	return nil
}

// EndSession returns the session's reserved jobs to ready with their counters unchanged, stops
// its waiting reserve and drops its tube references.
func (b *Backend) EndSession(ctx context.Context, id backend.SessionID) error {
	now, err := b.begin(ctx, "end session")
	if err != nil {
		return err
	}
	defer b.end()
	s := b.sessions[id]
	if s == nil {
		return nil
	}
	for w := range s.waiters {
		b.finishWaiterLocked(w, nil, backend.ErrTimedOut)
	}
	// beanstalkd returns them in the order they were reserved, each handed at once to a waiting
	// reserve if there is one: with one waiter, the job reserved first goes to it, whatever the
	// priorities.
	held := make([]*job, 0, s.reserved.Len())
	for s.reserved.Len() > 0 {
		held = append(held, s.reserved.Pop())
	}
	slices.SortFunc(held, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
	for _, j := range held {
		b.recordLocked(j, now, backend.EventHolderLeft, s, 0, "")
		b.deadlines.Remove(int(j.gIdx))
		j.tube.reserved--
		j.owner = nil
		if j.tube.pol != nil {
			j.state = 0 // detached, as comeBackLocked expects
			if placed, _ := b.comeBackLocked(j, now, 0, false); placed {
				b.slotFreedLocked(j.tube, now)
				continue
			}
		}
		b.readyLocked(j, now)
	}
	delete(b.sessions, id)
	// beanstalkd drops the watch list first, removing entry 0 each time (so the last entry moves
	// to the front), then the used tube; the order decides where emptied tubes leave list-tubes.
	for len(s.watching) > 0 {
		t := s.watching[0]
		s.unwatchAt(0)
		t.watching--
		b.unrefLocked(t)
	}
	s.using.using--
	b.unrefLocked(s.using)
	return nil
}

// Close stops the event timer and fails every waiting reserve with ErrClosed. Later calls fail
// with ErrClosed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.timerGen++
	for _, s := range b.sessions {
		for w := range s.waiters {
			b.finishWaiterLocked(w, nil, opErr("reserve", ErrClosed))
		}
	}
	if b.keys != nil {
		_ = b.keys.close()
	}
	if b.wal != nil {
		return b.wal.Close()
	}
	return nil
}

// ObserveLostReservations does nothing: the reservations live in this process, and end with its
// connections.
func (b *Backend) ObserveLostReservations(func([]backend.SessionID)) {}
