package postgres

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// emptyLists lets a waiting reserve skip its first statement when the last one over the same
// watch list found nothing ready and nothing has happened since that could change it. Under a
// steady load most jobs go from a put straight to a waiting worker (see put.sql), so a worker
// back from its delete finds nothing and waits: that statement was most of the store's reserve
// round trips, each answering what the previous one had.
//
// Nothing ready at a statement's snapshot stays true until a job is made ready (every way of
// doing so hints the waiters, and a hint moves waiters.gen) or the next due moment the statement
// gave comes (a delayed job, a reservation's deadline, a pause's end). The waiter's generation is
// read before the statement is sent, so a hint for a job committed after the statement's
// snapshot is seen; a reserve that skips registers its waiter before it compares generations, so
// a hint after that wakes it. What it then waits with is what the statement would have said:
// the same next due moment, with "now" moved on by the local clock. It is then exactly a waiter
// that was already there, and is served in the same order (waiters are served in the order they
// registered, as in beanstalkd).
//
// Two things a shared answer cannot carry are checked apart:
//   - DEADLINE_SOON depends on the session's own reservations: only a session that holds none
//     (holds) skips.
//   - A reservation made without a job becoming ready (a put handed to a waiting reserve, a
//     reserve-job) adds a deadline the answer may not have had: the lists of its tube whose next
//     due moment is later are dropped (reservedUntil).
//
// An answer is trusted for at most pollInterval, as a waiter polls at least that often. Not used
// under policies, whose caps and rates change what a tube may give without a hint.
type emptyLists struct {
	mu    sync.Mutex
	lists map[string]emptyList // by reserveItem.watchList
	holds map[string]*holding  // by session; absent: holds nothing
}

// emptyList is what a statement found for a watch list.
type emptyList struct {
	tubes []string
	gen   uint64    // waiters.gen read before the statement was sent
	wait  waitInfo  // its now (the store's clock) and next due moment; ownDeadline nil
	at    time.Time // the local clock when it answered
}

// holding is what a session may hold: the jobs reserved for it, less those it deleted, released
// or buried. A reservation that ran out stays until a statement finds the session holding
// none; past maxHolding the ids are dropped and only that finding empties it.
type holding struct {
	ids      map[uint64]struct{}
	overflow bool
}

// maxHolding bounds the ids kept per session, and maxEmptyLists the watch lists remembered.
const (
	maxHolding    = 1024
	maxEmptyLists = 1024
)

func newEmptyLists() *emptyLists {
	return &emptyLists{lists: map[string]emptyList{}, holds: map[string]*holding{}}
}

// found records the answer of a statement over tubes sent at waiter generation gen.
func (e *emptyLists) found(tubes []string, gen uint64, w waitInfo, at time.Time) {
	w.ownDeadline = nil
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.lists) >= maxEmptyLists {
		clear(e.lists)
	}
	e.lists[watchList(tubes)] = emptyList{tubes: tubes, gen: gen, wait: w, at: at}
}

// lookup returns what a statement over tubes would answer a session holding nothing, if the
// last answer still holds at generation gen and local time now.
func (e *emptyLists) lookup(tubes []string, gen uint64, now time.Time) (waitInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	l, ok := e.lists[watchList(tubes)]
	if !ok || l.gen != gen {
		return waitInfo{}, false
	}
	age := now.Sub(l.at)
	if age < 0 || age >= pollInterval {
		return waitInfo{}, false
	}
	w := l.wait
	w.now = w.now.Add(age)
	if w.nextDue != nil && !w.now.Before(*w.nextDue) {
		return waitInfo{}, false
	}
	return w, true
}

// reservedUntil drops the answers over tube that a reservation due at due (nil: not known)
// makes wrong: those whose next due moment is later, or none.
func (e *emptyLists) reservedUntil(tube string, due *time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, l := range e.lists {
		if slices.Contains(l.tubes, tube) && (due == nil || l.wait.nextDue == nil || l.wait.nextDue.After(*due)) {
			delete(e.lists, k)
		}
	}
}

// took records job id reserved for session.
func (e *emptyLists) took(session string, id uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.holds[session]
	if h == nil {
		h = &holding{ids: map[uint64]struct{}{}}
		e.holds[session] = h
	}
	if h.overflow {
		return
	}
	if len(h.ids) >= maxHolding {
		h.ids, h.overflow = nil, true
		return
	}
	h.ids[id] = struct{}{}
}

// gave records that session deleted, released or buried job id.
func (e *emptyLists) gave(session string, id uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.holds[session]
	if h == nil || h.overflow {
		return
	}
	delete(h.ids, id)
	if len(h.ids) == 0 {
		delete(e.holds, session)
	}
}

// holdsNone records that a statement found session holding no live reservation (or, ended,
// that it holds nothing any more). A session runs one command at a time, so nothing it took
// since the statement was sent is lost.
func (e *emptyLists) holdsNone(session string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.holds, session)
}

// free reports whether session holds no reservation.
func (e *emptyLists) free(session string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.holds[session] == nil
}

// watchList keys a list of watched tubes.
func watchList(tubes []string) string {
	return strings.Join(tubes, "\x00")
}
