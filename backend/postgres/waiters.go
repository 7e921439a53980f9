package postgres

import "sync"

// waiters are the reserves of this process blocked on tubes. A wake-up is only a hint to try
// again: the reserve statement decides, so spurious or lost wake-ups cost time, never correctness.
type waiters struct {
	mu     sync.Mutex
	byTube map[string]map[*waiter]struct{}
}

type waiter struct {
	tubes []string
	ch    chan struct{} // capacity 1: a pending hint is never lost, extra hints collapse
}

func newWaiters() *waiters {
	return &waiters{byTube: map[string]map[*waiter]struct{}{}}
}

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

// wake hints every waiter watching tube.
func (ws *waiters) wake(tube string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.byTube[tube] {
		w.signal()
	}
}

// wakeAll hints every waiter, after a gap in which notifications may have been missed.
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
