package redis

import (
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// waiters are this process's blocked reserves, by watched tube. A publish of a tube name wakes
// the waiters of that tube, which then re-run the reserve script; a wake-up is only a hint.
type waiters struct {
	mu     sync.Mutex
	byTube map[string]map[*waiter]struct{}
}

type waiter struct {
	tubes []string
	ch    chan struct{} // capacity 1: wake-ups coalesce while the waiter is busy
}

func newWaiters() *waiters { return &waiters{byTube: map[string]map[*waiter]struct{}{}} }

func (ws *waiters) add(tubes []string) *waiter {
	w := &waiter{tubes: tubes, ch: make(chan struct{}, 1)}
	ws.mu.Lock()
	defer ws.mu.Unlock()
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
	for _, t := range w.tubes {
		delete(ws.byTube[t], w)
		if len(ws.byTube[t]) == 0 {
			delete(ws.byTube, t)
		}
	}
}

func (ws *waiters) wake(tube string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.byTube[tube] {
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
