package redis

import (
	"sync"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// waiters are this process's blocked reserves, by watched tube. A publish of a tube name wakes
// one waiter of that tube, which then re-runs the reserve script; a wake-up is only a hint.
// One, not all: a publish announces about one job, and waking every waiter had them all run
// the script for it (a thundering herd: with 25 waiters a tube, 25 scripts per put). The hint
// is passed on whenever it may not have been used up: a reserve that got a job while jobs
// remain wakes another waiter, and a waiter leaving with a wake-up unread hands it over.
type waiters struct {
	mu        sync.Mutex
	byTube    map[string]map[*waiter]struct{}
	bySession map[backend.SessionID]*waiter
}

type waiter struct {
	session backend.SessionID
	tubes   []string
	ch      chan struct{} // capacity 1: wake-ups coalesce while the waiter is busy
	ended   atomic.Bool   // its session was ended here: the reserve must give up
}

func newWaiters() *waiters {
	return &waiters{byTube: map[string]map[*waiter]struct{}{}, bySession: map[backend.SessionID]*waiter{}}
}

func (ws *waiters) add(s backend.SessionID, tubes []string) *waiter {
	w := &waiter{session: s, tubes: tubes, ch: make(chan struct{}, 1)}
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
	if ws.bySession[w.session] == w {
		delete(ws.bySession, w.session)
	}
	for _, t := range w.tubes {
		delete(ws.byTube[t], w)
		if len(ws.byTube[t]) == 0 {
			delete(ws.byTube, t)
		}
	}
	if len(w.ch) > 0 && !w.ended.Load() { // woken, but gone without trying again
		for _, t := range w.tubes {
			ws.wakeOneLocked(t)
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
				w.signal()
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
			w.signal()
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
		w.signal()
	}
}

// wakeAll is for when publishes may have been missed (a resubscription) or on Close.
func (ws *waiters) wakeAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, set := range ws.byTube {
		for w := range set {
			w.signal()
		}
	}
}

func (w *waiter) signal() {
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
			b.waiters.wake(m.Payload)
		case *goredis.Subscription:
			b.waiters.wakeAll() // (re)subscribed after a reconnect: publishes may be lost
		}
	}
}
