package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// realTimeCases run on the store's own clock (see group.realTime).
var realTimeCases = []testCase{
	{"NoJobIsEverHeldByTwoSessionsOrHandedOutBeforeItIsReady", func(h *harness) {
		// Sessions overlap in every way a busy server sees: they reserve (waiting or not),
		// release (with and without delay), bury, touch, delete, let TTRs run out, disconnect
		// while holding jobs, and create and drop tubes all along, while producers put ready and
		// delayed jobs, a kicker kicks buried ones and a sweeper deletes delayed ones. A ledger checks every job handed out:
		// - no other session still holds it: its holder's reservation lasts at least TTR from
		//   the moment the holder asked (the reservation was made after that), and at least TTR
		//   less a generous slack from the moment the holder got the reply, unless the holder
		//   gave it up (before asking the store to, so a legitimate hand-over is never taken for
		//   a double one);
		// - it is ready: not deleted, not buried, and not before its delay has run from the
		//   moment its put or release was asked for.
		l := newLedger(time.Second)
		l.run(h, 3*time.Second)
		v := l.violations()
		require.Empty(h, v, "%d violations, the first: %v", len(v), v[:min(len(v), 10)])
		// Nothing here waits for anything but the store. A call that takes a whole second is
		// stuck behind others in the store (a deadlock, which PostgreSQL breaks after its
		// deadlock_timeout of 1 s, or a lock queue): every command behind it stalls, and a
		// store that dates a reservation from before the stall hands it out again.
		require.Less(h, l.slowest.Load(), int64(stall), "slowest call: %s (%s)", time.Duration(l.slowest.Load()), l.slowestOp.Load())
		// The run must have reached the states where such bugs live.
		h.Logf("reserves %d, expired %d, returned %d, delayed %d", l.reserves.Load(), l.expired.Load(), l.returned.Load(), l.delayed.Load())
		require.Greater(h, l.reserves.Load(), int64(100), "reserves")
		require.Greater(h, l.expired.Load(), int64(0), "jobs taken over after their TTR ran out")
		require.Greater(h, l.returned.Load(), int64(0), "jobs reserved again after their holder left")
		require.Greater(h, l.delayed.Load(), int64(0), "delayed jobs reserved")
	}},
}

// granularity is how finely a store may keep time: Redis's scripts count whole milliseconds, so a
// deadline or due time may come up to a millisecond before the microsecond the ledger computed.
const granularity = time.Millisecond

// ledger is what the sessions of a real-time case know about each job.
type ledger struct {
	ttr time.Duration
	// safe is how much of a reservation's TTR may be left, at least, when its holder acts on it:
	// the action (release, bury, delete) is then done long before the reservation could run out,
	// so the ledger's assumption that it took effect is sound unless the store stalls.
	safe time.Duration
	// slack is how long a store may take, at most, from deciding a reservation to its caller
	// having the reply: the holder has at least TTR minus slack from then.
	slack time.Duration

	mu    sync.Mutex
	jobs  map[uint64]*ledgerJob
	found []string

	reserves, expired, returned, delayed atomic.Int64

	slowest   atomic.Int64 // ns: the longest a call took, beyond a reserve's own timeout
	slowestOp atomic.Value // its name
}

// stall is how long a call may take, at most: far beyond what any store needs for this load
// (milliseconds, also under the race detector), and less than PostgreSQL's deadlock_timeout.
const stall = 900 * time.Millisecond

// timed records how long a call took, beyond what it was allowed to wait.
func (l *ledger) timed(op string, start time.Time, allowed time.Duration) {
	took := int64(time.Since(start) - allowed)
	for {
		old := l.slowest.Load()
		if took <= old {
			return
		}
		if l.slowest.CompareAndSwap(old, took) {
			l.slowestOp.Store(op)
			return
		}
	}
}

// timedBackend times every call a real-time case makes.
type timedBackend struct {
	backend.Backend
	l *ledger
}

func (b *timedBackend) BeginSession(ctx context.Context, s backend.SessionID, info backend.SessionInfo) error {
	defer b.l.timed("begin", time.Now(), 0)
	return b.Backend.BeginSession(ctx, s, info)
}

func (b *timedBackend) EndSession(ctx context.Context, s backend.SessionID) error {
	defer b.l.timed("end", time.Now(), 0)
	return b.Backend.EndSession(ctx, s)
}

func (b *timedBackend) UseTube(ctx context.Context, s backend.SessionID, tube string) error {
	defer b.l.timed("use", time.Now(), 0)
	return b.Backend.UseTube(ctx, s, tube)
}

func (b *timedBackend) WatchTube(ctx context.Context, s backend.SessionID, tube string) error {
	defer b.l.timed("watch", time.Now(), 0)
	return b.Backend.WatchTube(ctx, s, tube)
}

func (b *timedBackend) IgnoreTube(ctx context.Context, s backend.SessionID, tube string) error {
	defer b.l.timed("ignore", time.Now(), 0)
	return b.Backend.IgnoreTube(ctx, s, tube)
}

func (b *timedBackend) Put(ctx context.Context, p backend.PutParams) (uint64, error) {
	defer b.l.timed("put", time.Now(), 0)
	return b.Backend.Put(ctx, p)
}

func (b *timedBackend) PutBatch(ctx context.Context, ps []backend.PutParams) []backend.PutResult {
	defer b.l.timed("put", time.Now(), 0)
	return b.Backend.PutBatch(ctx, ps)
}

func (b *timedBackend) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	defer b.l.timed("reserve", time.Now(), p.Timeout)
	return b.Backend.Reserve(ctx, p)
}

func (b *timedBackend) Delete(ctx context.Context, s backend.SessionID, id uint64) error {
	defer b.l.timed("delete", time.Now(), 0)
	return b.Backend.Delete(ctx, s, id)
}

func (b *timedBackend) Release(ctx context.Context, p backend.ReleaseParams) error {
	defer b.l.timed("release", time.Now(), 0)
	return b.Backend.Release(ctx, p)
}

func (b *timedBackend) Bury(ctx context.Context, s backend.SessionID, id uint64, priority uint32) error {
	defer b.l.timed("bury", time.Now(), 0)
	return b.Backend.Bury(ctx, s, id, priority)
}

func (b *timedBackend) Touch(ctx context.Context, s backend.SessionID, id uint64) error {
	defer b.l.timed("touch", time.Now(), 0)
	return b.Backend.Touch(ctx, s, id)
}

func (b *timedBackend) Kick(ctx context.Context, tube string, bound uint64) (uint64, error) {
	defer b.l.timed("kick", time.Now(), 0)
	return b.Backend.Kick(ctx, tube, bound)
}

func (b *timedBackend) PeekState(ctx context.Context, tube string, state backend.State) (*backend.Job, error) {
	defer b.l.timed("peek", time.Now(), 0)
	return b.Backend.PeekState(ctx, tube, state)
}

type ledgerJob struct {
	holder    backend.SessionID // "" when nobody holds it, as far as the ledger knows
	holdUntil time.Time         // the holder's reservation lasts at least until then
	asked     time.Time         // when the holder asked for it
	got       time.Time         // when the holder got it
	notBefore time.Time         // it is not ready before then (a delay)
	left      bool              // its holder disconnected without giving it up
	buried    bool
	deleted   bool
}

func newLedger(ttr time.Duration) *ledger {
	return &ledger{ttr: ttr, safe: ttr / 2, slack: ttr / 2, jobs: map[uint64]*ledgerJob{}}
}

func (l *ledger) job(id uint64) *ledgerJob {
	j := l.jobs[id]
	if j == nil {
		j = &ledgerJob{}
		l.jobs[id] = j
	}
	return j
}

func (l *ledger) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.found...)
}

// put records a job put at asked with delay.
func (l *ledger) put(id uint64, asked time.Time, delay time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if delay > 0 {
		l.job(id).notBefore = asked.Add(delay)
	}
}

// reserved checks and records job id handed to s by a reserve asked at asked and answered at got.
func (l *ledger) reserved(s backend.SessionID, id uint64, asked, got time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserves.Add(1)
	j := l.job(id)
	switch {
	case j.deleted:
		l.found = append(l.found, fmt.Sprintf("job %d handed to %s after it was deleted", id, s))
	case j.buried:
		l.found = append(l.found, fmt.Sprintf("job %d handed to %s while buried", id, s))
	case j.holder != "" && got.Add(granularity).Before(j.holdUntil):
		l.found = append(l.found, fmt.Sprintf("job %d handed to %s at %s while %s held it until at least %s (it asked at %s, got it at %s)",
			id, s, got.Format("15:04:05.000"), j.holder, j.holdUntil.Format("15:04:05.000"),
			j.asked.Format("15:04:05.000"), j.got.Format("15:04:05.000")))
	case got.Add(granularity).Before(j.notBefore):
		l.found = append(l.found, fmt.Sprintf("job %d handed to %s at %s, %s before its delay ran out",
			id, s, got.Format("15:04:05.000"), j.notBefore.Sub(got)))
	}
	switch {
	case j.holder != "" && !j.left:
		l.expired.Add(1)
	case j.left:
		l.returned.Add(1)
	case !j.notBefore.IsZero():
		l.delayed.Add(1)
	}
	// The store decided after asked, and its reply came at got: a reservation dated from a
	// stale clock would end before its holder had most of its TTR to work on it.
	*j = ledgerJob{holder: s, holdUntil: later(asked.Add(l.ttr), got.Add(l.ttr-l.slack)), asked: asked, got: got}
}

// giveUp is called by s before it asks the store to release (with delay), bury or delete job
// id. It reports false, changing nothing, when the reservation may run out before the store
// acts: the caller then leaves the job alone.
func (l *ledger) giveUp(s backend.SessionID, id uint64, now time.Time, delay time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	j := l.job(id)
	if j.holder != s || now.Add(l.safe).After(j.holdUntil) {
		return false
	}
	j.holder, j.notBefore = "", now.Add(delay)
	return true
}

// touched records that s's touch of id, asked at asked, succeeded.
func (l *ledger) touched(s backend.SessionID, id uint64, asked time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if j := l.job(id); j.holder == s && asked.Add(l.ttr).After(j.holdUntil) {
		j.holdUntil = asked.Add(l.ttr)
	}
}

func (l *ledger) buried(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.job(id).buried = true
}

func (l *ledger) deleted(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.job(id).deleted = true
}

// kicking is called before a kick of tube: its buried jobs may be ready from now on.
func (l *ledger) kicking(ids []uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.job(id).buried = false
	}
}

// leaving is called before s ends: its jobs are ready again from now on.
func (l *ledger) leaving(s backend.SessionID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, j := range l.jobs {
		if j.holder == s {
			j.holder, j.left = "", true
		}
	}
}

// run plays the sessions for d against h's backend.
func (l *ledger) run(h *harness, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d+4*watchdog)
	defer cancel()
	deadline := time.Now().Add(d)
	shared := []string{"rt.a", "rt.b", "rt.c"}
	b := &timedBackend{Backend: h.b, l: l}
	var (
		wg     sync.WaitGroup
		errMu  sync.Mutex
		errs   []error
		buryMu sync.Mutex
		// kickMu keeps a kick apart from buries in flight: a kick moves the tube's oldest buried
		// jobs, by count, so it must find in the store exactly the jobs the ledger lists as
		// buried there (a bury done in the store but not yet in the ledger would be kicked
		// unseen, and the ledger would take its next reservation for one of a buried job).
		kickMu  sync.RWMutex
		buriedM = map[string][]uint64{} // tube → jobs buried there, for the kicker
	)
	fail := func(what string, err error) {
		errMu.Lock()
		defer errMu.Unlock()
		errs = append(errs, fmt.Errorf("%s: %w", what, err))
	}
	begin := func(id backend.SessionID) bool {
		if err := b.BeginSession(ctx, id, backend.SessionInfo{}); err != nil {
			fail("begin", err)
			return false
		}
		return true
	}

	for p := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 1))
			s := backend.SessionID(fmt.Sprintf("rt.producer.%d", p))
			if !begin(s) {
				return
			}
			defer func() { _ = b.EndSession(ctx, s) }()
			for n := 0; time.Now().Before(deadline); n++ {
				tube := shared[r.IntN(len(shared))]
				if r.IntN(2) == 0 { // a tube of its own for a moment: created, then dropped
					if err := b.UseTube(ctx, s, fmt.Sprintf("rt.p%d.%d", p, n)); err != nil {
						fail("use", err)
						return
					}
				}
				if err := b.UseTube(ctx, s, tube); err != nil {
					fail("use", err)
					return
				}
				var delay time.Duration
				if r.IntN(3) == 0 {
					delay = time.Duration(100+r.IntN(400)) * time.Millisecond
				}
				asked := time.Now()
				id, err := b.Put(ctx, backend.PutParams{Session: s, Tube: tube, Priority: uint32(r.IntN(3)), Delay: delay, TTR: l.ttr, Body: []byte("x")})
				if err != nil {
					fail("put", err)
					return
				}
				l.put(id, asked, delay)
				time.Sleep(time.Duration(r.IntN(8)) * time.Millisecond)
			}
		}()
	}

	wg.Add(1)
	go func() { // the sweeper: deletes delayed jobs, as any session may
		defer wg.Done()
		s := backend.SessionID("rt.sweeper")
		if !begin(s) {
			return
		}
		defer func() { _ = b.EndSession(ctx, s) }()
		for n := 0; time.Now().Before(deadline); n++ {
			time.Sleep(5 * time.Millisecond)
			j, err := b.PeekState(ctx, shared[n%len(shared)], backend.Delayed)
			if errors.Is(err, backend.ErrNotFound) {
				continue
			} else if err != nil {
				fail("peek-delayed", err)
				return
			}
			if err := b.Delete(ctx, s, j.ID); err == nil {
				l.deleted(j.ID)
			} else if !errors.Is(err, backend.ErrNotFound) {
				fail("delete", err)
				return
			}
		}
	}()

	wg.Add(1)
	go func() { // the kicker
		defer wg.Done()
		for time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			for _, tube := range shared {
				kickMu.Lock()
				buryMu.Lock()
				ids := buriedM[tube]
				buriedM[tube] = nil
				buryMu.Unlock()
				if len(ids) == 0 {
					kickMu.Unlock()
					continue
				}
				l.kicking(ids)
				_, err := b.Kick(ctx, tube, uint64(len(ids)))
				kickMu.Unlock()
				if err != nil {
					fail("kick", err)
					return
				}
			}
		}
	}()

	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 2))
			gen := 0
			s := backend.SessionID(fmt.Sprintf("rt.worker.%d.%d", w, gen))
			if !begin(s) {
				return
			}
			watched := []string{backend.DefaultTube}
			watch := func(tube string) bool {
				if err := b.WatchTube(ctx, s, tube); err != nil {
					fail("watch", err)
					return false
				}
				watched = append(watched, tube)
				return true
			}
			for _, tube := range shared[:1+w%len(shared)] {
				if !watch(tube) {
					return
				}
			}
			base := len(watched)
			var held []uint64
			began := time.Now()
			for n := 0; time.Now().Before(deadline); n++ {
				if r.IntN(2) == 0 { // a tube of its own for a moment, then ignored (and dropped)
					if !watch(fmt.Sprintf("rt.w%d.%d", w, n)) {
						return
					}
				} else if len(watched) > base {
					last := watched[len(watched)-1]
					if err := b.IgnoreTube(ctx, s, last); err != nil {
						fail("ignore", err)
						return
					}
					watched = watched[:len(watched)-1]
				}
				// Disconnect, holding what it holds; not before its first jobs' TTRs could run out.
				if time.Since(began) > l.ttr+l.ttr/4 && r.IntN(20) == 0 {
					l.leaving(s)
					if err := b.EndSession(ctx, s); err != nil {
						fail("end", err)
						return
					}
					gen++
					s = backend.SessionID(fmt.Sprintf("rt.worker.%d.%d", w, gen))
					if !begin(s) {
						return
					}
					began = time.Now()
					watched, held = []string{backend.DefaultTube}, nil
					for _, tube := range shared[:1+w%len(shared)] {
						if !watch(tube) {
							return
						}
					}
					continue
				}
				timeout := time.Duration(r.IntN(3)) * 50 * time.Millisecond
				asked := time.Now()
				j, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: append([]string(nil), watched...), Timeout: timeout})
				got := time.Now()
				switch {
				case errors.Is(err, backend.ErrTimedOut), errors.Is(err, backend.ErrDeadlineSoon):
					continue
				case err != nil:
					fail("reserve "+string(s), err)
					return
				}
				l.reserved(s, j.ID, asked, got)
				if r.IntN(8) == 0 {
					continue // a worker that hangs on this job: its TTR runs out
				}
				held = append(held, j.ID)
				time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond) // the work

				id := held[r.IntN(len(held))]
				now := time.Now()
				switch k := r.IntN(10); {
				case k < 3:
					if !l.giveUp(s, id, now, 0) {
						break
					}
					if err := b.Delete(ctx, s, id); err == nil {
						l.deleted(id)
					} else if !errors.Is(err, backend.ErrNotFound) {
						fail("delete", err)
						return
					}
				case k < 5:
					delay := time.Duration(r.IntN(2)) * 300 * time.Millisecond
					if !l.giveUp(s, id, now, delay) {
						break
					}
					err := b.Release(ctx, backend.ReleaseParams{Session: s, ID: id, Priority: uint32(r.IntN(3)), Delay: delay})
					if err != nil && !errors.Is(err, backend.ErrNotFound) {
						fail("release", err)
						return
					}
				case k < 6:
					if !l.giveUp(s, id, now, 0) {
						break
					}
					tube := ""
					if st, err := b.JobStats(ctx, id); err == nil {
						tube = st.Tube
					}
					kickMu.RLock()
					err := b.Bury(ctx, s, id, 1)
					if err == nil {
						l.buried(id)
						buryMu.Lock()
						buriedM[tube] = append(buriedM[tube], id)
						buryMu.Unlock()
					}
					kickMu.RUnlock()
					if err != nil && !errors.Is(err, backend.ErrNotFound) {
						fail("bury", err)
						return
					}
				case k < 7:
					if err := b.Touch(ctx, s, id); err == nil {
						l.touched(s, id, now)
						continue // still held
					} else if !errors.Is(err, backend.ErrNotFound) {
						fail("touch", err)
						return
					}
				default: // keep it: its TTR runs out unless it is acted on later
					continue
				}
				held = removeID(held, id)
			}
			l.leaving(s)
			if err := b.EndSession(ctx, s); err != nil {
				fail("end", err)
			}
		}()
	}
	wg.Wait()
	require.NoError(h, errors.Join(errs...))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func removeID(ids []uint64, id uint64) []uint64 {
	for i, x := range ids {
		if x == id {
			return append(ids[:i], ids[i+1:]...)
		}
	}
	return ids
}
