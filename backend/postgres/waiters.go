package postgres

import (
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

// waiters are the reserves of this process blocked on tubes. A wake-up is only a hint to try
// again: the reserve statement decides, so spurious or lost wake-ups cost time, never correctness.
//
// A job made ready wakes one waiter, not all: waking every waiter of a tube for each put would
// send a reserve statement per waiter per job, which is what limits throughput with many idle
// workers.
type waiters struct {
	mu     sync.Mutex
	byTube map[string][]*waiter // in the order they started waiting
	// gen counts the hints given, waiters or not: a reserve statement's answer of nothing ready
	// holds while it has not moved (emptyLists).
	gen uint64
}

type waiter struct {
	tubes   []string
	session string
	ch      chan struct{} // capacity 1: a pending hint is never lost, extra hints collapse
	// handed holds the id of a job a closing session returned and handOut gave to this waiter,
	// until its next attempt tries that job first (capacity 1: one at a time).
	handed chan uint64
	// state (guarded by waiters.mu) says whether a put may claim this reserve for its job: only
	// while it waits between attempts (idle). A claimed reserve waits for gift, whatever else
	// ends its wait, so that a job reserved for it is answered.
	state waiterState
	gift  chan *backend.Job // capacity 1: the claiming put's job, or nil: try again
	// sooner carries the deadline of a reservation made in a watched tube while it waits
	// (capacity 1, the earliest kept: see reservedUntil), which its next due moment may not have.
	sooner chan time.Time
	next   *time.Time // guarded by waiters.mu: the due moment its timer is set for (nil: none)
}

type waiterState int

const (
	busy    waiterState = iota // making an attempt
	idle                       // waiting: a put may claim it
	claimed                    // a put is committing a job reserved for it
)

func newWaiters() *waiters {
	return &waiters{byTube: map[string][]*waiter{}}
}

func (ws *waiters) add(session string, tubes []string) *waiter {
	w := &waiter{tubes: tubes, session: session, ch: make(chan struct{}, 1), handed: make(chan uint64, 1),
		gift: make(chan *backend.Job, 1), sooner: make(chan time.Time, 1)}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, t := range tubes {
		ws.byTube[t] = append(ws.byTube[t], w)
	}
	return w
}

// remove forgets w. A hint w holds but will not act on (one still pending, or one that may have
// arrived as its caller gave up: passOn) goes to another waiter of its tubes, so that a job is
// not left ready while others sleep.
func (ws *waiters) remove(w *waiter, passOn bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, t := range w.tubes {
		list := ws.byTube[t]
		for i, x := range list {
			if x == w {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(ws.byTube, t)
		} else {
			ws.byTube[t] = list
		}
	}
	if passOn || len(w.ch) > 0 || len(w.handed) > 0 {
		for _, t := range w.tubes {
			ws.wakeLocked(t, 1)
		}
	}
}

// handOut gives the jobs a closing session returned, in the order it had reserved them, each to
// the longest-waiting reserve of its tube that has none handed yet, as beanstalkd hands them out
// one by one: with one waiter, it gets the job reserved first, whatever the priorities. A job of
// a paused tube, or one no waiter is left for, only wakes a waiter, as any job made ready does.
func (ws *waiters) handOut(r handedJobs) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.gen++
	for i, id := range r.ids {
		tube := r.tubes[i]
		if !r.paused[i] && ws.handLocked(tube, uint64(id)) {
			continue
		}
		ws.wakeLocked(tube, 1)
	}
}

func (ws *waiters) handLocked(tube string, id uint64) bool {
	for _, w := range ws.byTube[tube] {
		select {
		case w.handed <- id:
			w.signal()
			return true
		default: // it has one already
		}
	}
	return false
}

// claim takes for a put into tube the longest-waiting reserve of tube that is idle and has no
// hint or handed job pending (it is about to try anyway), or nil. The put answers it with give.
func (ws *waiters) claim(tube string) *waiter {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.byTube[tube] {
		if w.state == idle && len(w.ch) == 0 && len(w.handed) == 0 {
			w.state = claimed
			return w
		}
	}
	return nil
}

// setIdle lets puts claim w, until settle.
func (ws *waiters) setIdle(w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w.state = idle
}

// settle ends w's wait: it reports whether a put claimed w, whose gift w must then take.
func (ws *waiters) settle(w *waiter) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	was := w.state
	w.state = busy
	return was == claimed
}

// give answers a claimed reserve.
func (w *waiter) give(j *backend.Job) {
	w.gift <- j
}

// takeHanded returns the job handed to w, if any.
func (w *waiter) takeHanded() (uint64, bool) {
	select {
	case id := <-w.handed:
		return id, true
	default:
		return 0, false
	}
}

// reservedUntil tells the waiters of tube that a reservation there runs out at due: whoever it
// is not taken from by then gets it, as beanstalkd gives a job whose TTR ran out to a waiting
// reserve, and a waiter's timer was set from what its last statement saw.
func (ws *waiters) reservedUntil(tube string, due time.Time) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.byTube[tube] {
		if w.next != nil && !due.Before(*w.next) {
			continue // its timer comes first anyway: no wake-up for nothing
		}
		at := due
		select {
		case prev := <-w.sooner:
			if prev.Before(at) {
				at = prev
			}
		default:
		}
		w.sooner <- at // room: senders hold ws.mu, and it was just emptied
	}
}

// timedFor records the due moment w's timer is set for.
func (ws *waiters) timedFor(w *waiter, next *time.Time) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w.next = next
}

// generation is the count of hints given so far.
func (ws *waiters) generation() uint64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.gen
}

// madeReady counts a job made ready whose hint is given otherwise than by wake: a put that
// claimed a waiter and made its job ready after all answers that waiter itself.
func (ws *waiters) madeReady() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.gen++
}

// wake hints n waiters of tube (n == 0: all of them), preferring those that have no hint pending
// and, among them, the longest waiting.
func (ws *waiters) wake(tube string, n int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.wakeLocked(tube, n)
}

func (ws *waiters) wakeLocked(tube string, n int) {
	ws.gen++
	woken := 0
	for _, w := range ws.byTube[tube] {
		if n > 0 && woken >= n {
			return
		}
		if w.state != claimed && w.signal() {
			woken++
		}
	}
	// A claimed reserve acts on a hint only once its put has answered: a job made ready
	// meanwhile goes to it only when no other waiter is left.
	for _, w := range ws.byTube[tube] {
		if n > 0 && woken >= n {
			return
		}
		if w.state == claimed && w.signal() {
			woken++
		}
	}
}

// wakeAll hints every waiter, after a gap in which notifications may have been missed.
func (ws *waiters) wakeAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.gen++
	for _, list := range ws.byTube {
		for _, w := range list {
			w.signal()
		}
	}
}

// signal leaves a hint, reporting false if one was already pending.
func (w *waiter) signal() bool {
	select {
	case w.ch <- struct{}{}:
		return true
	default:
		return false
	}
}
