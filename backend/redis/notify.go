package redis

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// waiters are this process's blocked reserves, by watched tube. A publish of a tube name wakes
// one waiter of that tube, which then re-runs the reserve script; a wake-up is only a hint.
// One, not all: a publish announces about one job, and waking every waiter had them all run
// the script for it (a thundering herd: with 25 waiters a tube, 25 scripts per put). The hint
// is passed on whenever it may not have been used up: a reserve that got a job while jobs
// remain wakes another waiter, and a waiter leaving with a wake-up unread hands it over.
//
// Due times (a delayed job due, a reservation expiring, a pause ending: the next time the
// reserve script reported) wake the same way: the waiters due at one time share one timer (a
// dueSlot), which wakes one waiter per tube, not all of them; more are woken as above if the
// one woken finds jobs left. The others become idle: they no longer know their tubes' next due
// time, and rely on a waiter of each of their tubes that does (it is woken or armed, and re-arms
// after its try). A waiter that leaves hands that duty to an idle one when no waiter of a tube
// is left that is not idle, so no due time goes unwatched (handOffLocked).
type waiters struct {
	mu        sync.Mutex
	byTube    map[string]map[*waiter]struct{}
	bySession map[backend.SessionID]*waiter
	due       map[int64]*dueSlot // by due time (ms)
	// Session ends in flight (beginHandOut): a waiter woken meanwhile, by the publish of a job
	// the end returned, waits for handOut to say whom that job goes to before it tries.
	handing  int
	handDone chan struct{} // closed when handing drops to 0
	anyHand  atomic.Bool   // handing > 0: lets a reserve's try skip the lock when none is

	beforeTimer func() // tests: runs before each timer a waiting reserve sets
}

type waiter struct {
	session backend.SessionID
	tubes   []string
	ch      chan struct{} // capacity 1: wake-ups coalesce while the waiter is busy
	ended   atomic.Bool   // its session was ended here: the reserve must give up
	// handed holds the id (padded) of a job a closing session returned and handOut gave this
	// waiter, until its next try reserves that job first.
	handed chan string

	// Guarded by waiters.mu.
	slot *dueSlot // the due time it is armed for, if any
	idle bool     // a due time it was armed for woke another waiter of its tubes instead
}

// dueSlot is the timer of every waiter of this process armed for one due time of its tubes.
// (A waiter's own due time, its DEADLINE_SOON, is its own timer: see Reserve.)
type dueSlot struct {
	at      int64 // ms, the reserve script's clock
	timer   backend.Timer
	waiters map[*waiter]struct{}
}

func newWaiters() *waiters {
	return &waiters{
		byTube:    map[string]map[*waiter]struct{}{},
		bySession: map[backend.SessionID]*waiter{},
		due:       map[int64]*dueSlot{},
	}
}

func (ws *waiters) add(s backend.SessionID, tubes []string) *waiter {
	w := &waiter{session: s, tubes: tubes, ch: make(chan struct{}, 1), handed: make(chan string, 1)}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.bySession[s] = w
	for _, t := range tubes {
		set := ws.byTube[t]
		if set == nil {
			set = map[*waiter]struct{}{}
			ws.byTube[t] = set
		}
		set[w] = struct{}{}
	}
	return w
}

func (ws *waiters) remove(w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.disarmLocked(w)
	if ws.bySession[w.session] == w {
		delete(ws.bySession, w.session)
	}
	for _, t := range w.tubes {
		delete(ws.byTube[t], w)
		if len(ws.byTube[t]) == 0 {
			delete(ws.byTube, t)
		}
	}
	unread := len(w.ch) > 0 && !w.ended.Load() // woken, but gone without trying again
	for _, t := range w.tubes {
		if unread {
			ws.wakeOneLocked(t)
		}
		if !w.idle {
			ws.handOffLocked(t)
		}
	}
}

// handOffLocked wakes an idle waiter of tube when every waiter left of it is idle: one of them
// must try again to learn the tube's next due time.
func (ws *waiters) handOffLocked(tube string) {
	var idle *waiter
	for w := range ws.byTube[tube] {
		if !w.idle {
			return
		}
		idle = w
	}
	if idle != nil {
		ws.signalLocked(idle)
	}
}

// arm sets w to be woken at the due time of its tubes at (ms; -1: none) the reserve script
// reported, which comes at due on clock. Waiters due at the same time share one timer; arming
// again for the time it is armed for keeps it, so a fake clock's pending timers stay stable
// while a reserve waits.
func (ws *waiters) arm(w *waiter, at int64, due time.Time, clock backend.Clock) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w.idle = false
	if w.slot != nil && w.slot.at == at {
		return
	}
	ws.disarmLocked(w)
	if at < 0 {
		return
	}
	s := ws.due[at]
	if s == nil {
		s = &dueSlot{at: at, waiters: map[*waiter]struct{}{}}
		if ws.beforeTimer != nil {
			ws.beforeTimer()
		}
		s.timer = backend.AfterFuncAt(clock, due, func() { ws.fire(s) })
		ws.due[at] = s
	}
	s.waiters[w] = struct{}{}
	w.slot = s
}

// disarmLocked takes w out of its due slot, stopping the slot's timer when it was the last.
func (ws *waiters) disarmLocked(w *waiter) {
	s := w.slot
	if s == nil {
		return
	}
	w.slot = nil
	delete(s.waiters, w)
	if len(s.waiters) == 0 {
		s.timer.Stop()
		delete(ws.due, s.at)
	}
}

// fire wakes, of the waiters due at s's time, one per tube; the others become idle.
func (ws *waiters) fire(s *dueSlot) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.due[s.at] != s {
		return // disarmed while firing
	}
	delete(ws.due, s.at)
	covered := map[string]bool{}
	wake := func(w *waiter) {
		ws.signalLocked(w)
		for _, t := range w.tubes {
			covered[t] = true
		}
	}
	for w := range s.waiters {
		w.slot = nil
		if slices.ContainsFunc(w.tubes, func(t string) bool { return !covered[t] }) {
			wake(w)
		} else {
			w.idle = true // its tubes are watched by those woken
		}
	}
}

// wake wakes one waiter of tube.
func (ws *waiters) wake(tube string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.wakeOneLocked(tube)
}

// wakeOne wakes one waiter of each of tubes (other than self).
func (ws *waiters) wakeOne(tubes []string, self *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, t := range tubes {
		for w := range ws.byTube[t] {
			if w != self && len(w.ch) == 0 {
				ws.signalLocked(w)
				break
			}
		}
	}
}

// wakeOneLocked signals a waiter of tube that has no wake-up pending; if all have one, they are
// about to try anyway.
func (ws *waiters) wakeOneLocked(tube string) {
	for w := range ws.byTube[tube] {
		if len(w.ch) == 0 {
			ws.signalLocked(w)
			return
		}
	}
}

// endSession stops the waiting reserve of session s, if it waits here.
func (ws *waiters) endSession(s backend.SessionID) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w := ws.bySession[s]; w != nil {
		w.ended.Store(true)
		ws.signalLocked(w)
	}
}

// beginHandOut marks a session end in flight; endHandOut (after handOut, or on failure) ends it.
func (ws *waiters) beginHandOut() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.handing == 0 {
		ws.handDone = make(chan struct{})
		ws.anyHand.Store(true)
	}
	ws.handing++
}

func (ws *waiters) endHandOut() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.handing--; ws.handing == 0 {
		ws.anyHand.Store(false)
		close(ws.handDone)
	}
}

// handingOut is closed once no session end is in flight; nil when none is.
func (ws *waiters) handingOut() <-chan struct{} {
	if !ws.anyHand.Load() {
		return nil
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.handing == 0 {
		return nil
	}
	return ws.handDone
}

// handed is a job made ready that goes to a waiting reserve before anyone else: a job a closing
// session returned, or one of a kick.
type handed struct{ id, tube string } // id padded

// handOut gives jobs, in order, each to a waiting reserve of its tube here that has none handed
// yet, as beanstalkd hands jobs out one by one as it makes them ready: one waiter gets the first,
// whatever the priorities. (A job of a paused tube is never among them: it is only published.)
func (ws *waiters) handOut(jobs []handed) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, j := range jobs {
		for w := range ws.byTube[j.tube] {
			if w.ended.Load() {
				continue
			}
			select {
			case w.handed <- j.id:
				ws.signalLocked(w)
			default: // it has one already
				continue
			}
			break
		}
	}
}

// returnedJobs decodes session_end's reply ({id, tube, paused}..., in the order they were
// reserved) into the jobs to hand out.
func returnedJobs(r *reply) []handed {
	var out []handed
	for i := 0; i+2 < len(r.a); i += 3 {
		if id, tube, paused := r.str(i), r.str(i+1), r.int(i+2); r.err == nil && paused == 0 {
			out = append(out, handed{id, tube})
		}
	}
	return out
}

// takeHanded returns the job handed to w, if any.
func (w *waiter) takeHanded() (string, bool) {
	select {
	case id := <-w.handed:
		return id, true
	default:
		return "", false
	}
}

// wakeAll is for when publishes may have been missed (a resubscription) or on Close.
func (ws *waiters) wakeAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, set := range ws.byTube {
		for w := range set {
			ws.signalLocked(w)
		}
	}
}

// signalLocked wakes w: it will try again, so it is no longer idle.
func (ws *waiters) signalLocked(w *waiter) {
	w.idle = false
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// listen dispatches the namespace channel's messages to the waiters until Close.
func (b *Backend) listen() {
	defer b.wg.Done()
	for m := range b.pubsub.ChannelWithSubscriptions(goredis.WithChannelSize(1024)) {
		switch m := m.(type) {
		case *goredis.Message:
			if !b.dropPub.Load() {
				b.waiters.wake(m.Payload)
			}
		case *goredis.Subscription:
			// (Re)subscribed after a reconnect: publishes may be lost, and Redis may have lost
			// data (restarted, failed over): renew the leases and restore at once (lease.go).
			b.waiters.wakeAll()
			for _, ch := range []chan struct{}{b.reconnected, b.restoreNow} {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}
}
