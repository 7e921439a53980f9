package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

// durablePointEvery bounds how long an acknowledged reservation stays not known durable while
// no put or delete commits: the durable point loop commits one then.
const durablePointEvery = 200 * time.Millisecond

// A reserve or a touch commits without waiting for the WAL flush (reserve_many.sql): a crash of
// the server, or a promoted standby that had not received it, forgets it, and the job is ready
// again while its worker believes it holds it. undurable keeps, in memory, the sessions with
// such a commit not yet known durable, so that when the server may have been lost they are
// reported (ObserveLostReservations) and the gateway closes their connections.
//
// A commit that waits for the flush (synchronous_commit on) flushes the WAL up to its own commit
// record, and so every commit that completed before it was sent: each durable point (a write
// batch that wrote, or the loop's own) takes a number from seq before it is sent, and once it
// succeeds every session marked with a number up to it is durable. A reserve completed after
// point k was taken is marked k+1: only a later point covers it.
type undurable struct {
	mu        sync.Mutex
	seq       uint64           // durable points taken
	sessions  map[string]*mark // sessions with a reservation or touch not known durable
	marked    int              // sessions whose mark is set
	kick      chan struct{}    // a mark was set: the loop times a durable point
	observers []func([]backend.SessionID)
}

type mark struct {
	pending int    // reserves or touches in flight: whether they commit is not known yet
	at      uint64 // the first durable point that covers the last one completed; 0: none
}

func newUndurable() *undurable {
	return &undurable{sessions: map[string]*mark{}, kick: make(chan struct{}, 1)}
}

// begin marks sessions about to send a reserve or a touch: from now until a durable point
// covers it, a lost server is reported to them.
func (u *undurable) begin(sessions ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, s := range sessions {
		m := u.sessions[s]
		if m == nil {
			m = &mark{}
			u.sessions[s] = m
		}
		m.pending++
	}
}

// end follows begin once the statement is answered: held(i) tells whether session i may now
// hold what it committed (a job reserved, a deadline moved, or a failure that may have
// committed anyway); one that reserved nothing is forgotten unless marked before.
func (u *undurable) end(sessions []string, held func(i int) bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	setOne := false
	for i, s := range sessions {
		m := u.sessions[s]
		if m == nil {
			continue // reported lost meanwhile
		}
		m.pending--
		if held(i) {
			if m.at == 0 {
				u.marked++
			}
			m.at, setOne = u.seq+1, true
		}
		if m.pending == 0 && m.at == 0 {
			delete(u.sessions, s)
		}
	}
	if setOne {
		select {
		case u.kick <- struct{}{}:
		default:
		}
	}
}

// endOne is end for one session.
func (u *undurable) endOne(session string, held bool) {
	u.end([]string{session}, func(int) bool { return held })
}

// take numbers a durable point about to be sent.
func (u *undurable) take() uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seq++
	return u.seq
}

// durable records that point k committed, flushed.
func (u *undurable) durable(k uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.marked == 0 {
		return
	}
	for s, m := range u.sessions {
		if m.at == 0 || m.at > k {
			continue
		}
		m.at = 0
		u.marked--
		if m.pending == 0 {
			delete(u.sessions, s)
		}
	}
}

// waiting tells whether some completed reserve or touch waits for a durable point.
func (u *undurable) waiting() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.marked > 0
}

// lost reports every session marked to the observers and forgets them: the server they
// committed on may be gone. Those whose statement is still in flight are reported too (it may
// commit there and be answered after).
func (u *undurable) lost() {
	u.mu.Lock()
	if len(u.sessions) == 0 {
		u.mu.Unlock()
		return
	}
	ids := make([]backend.SessionID, 0, len(u.sessions))
	for s := range u.sessions {
		ids = append(ids, backend.SessionID(s))
	}
	clear(u.sessions)
	u.marked = 0
	observers := u.observers
	u.mu.Unlock()
	for _, f := range observers {
		f(ids)
	}
}

// ObserveLostReservations has f called with the sessions whose reservations or touches were
// acknowledged but may be forgotten, when the server may have been lost (see undurable).
func (b *Backend) ObserveLostReservations(f func([]backend.SessionID)) {
	b.undurable.mu.Lock()
	defer b.undurable.mu.Unlock()
	b.undurable.observers = append(b.undurable.observers, f)
}

// serverLost runs when the server the Backend's connections lead to may have crashed or been
// replaced: a connection broke, a new one found another server, or the database was found
// unreachable.
func (b *Backend) serverLost() {
	b.undurable.lost()
}

// durablePoints commits a durable point durablePointEvery after a reserve or touch completed,
// unless a write batch has covered it by then. Idle, it waits for a mark without a timer.
func (b *Backend) durablePoints() {
	defer b.wg.Done()
	for {
		select {
		case <-b.stop:
			return
		case <-b.undurable.kick:
		}
		for b.undurable.waiting() {
			t := time.NewTimer(b.durableEvery())
			select {
			case <-b.stop:
				t.Stop()
				return
			case <-t.C:
			}
			if !b.undurable.waiting() {
				break
			}
			k := b.undurable.take()
			err := b.runBatch(context.Background(), func(ctx context.Context) error {
				_, err := b.pool.Exec(ctx, b.st.get("durable_point"))
				return err
			})
			if err == nil {
				b.undurable.durable(k)
			} else if !isOutage(err) && !errors.Is(err, backend.ErrUnreachable) && !errors.Is(err, errClosed) {
				b.failures.Background.Failed("postgres: a durable point failed", err)
			}
		}
	}
}

// durableEvery is durablePointEvery, except in tests that need a reservation left undurable.
func (b *Backend) durableEvery() time.Duration {
	if d := b.durableEveryTest.Load(); d != 0 {
		return time.Duration(d)
	}
	return durablePointEvery
}
