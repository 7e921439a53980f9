// Package clocktest has a backend.Clock for tests: it moves only when told to, so that cases
// about delays, timeouts and TTRs run in milliseconds and never race the wall clock.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

// Fake is a backend.Clock that moves only when told to. Timers due at or before the new
// time fire, in order of due time, when Advance is called.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a Fake set at start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

var _ backend.AtClock = (*Fake)(nil)

type fakeTimer struct {
	clock *Fake
	at    time.Time
	f     func()
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f for d after the fake now; d <= 0 fires at once (in a goroutine).
func (c *Fake) AfterFunc(d time.Duration, f func()) backend.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scheduleLocked(c.now.Add(d), f)
}

// AfterFuncAt schedules f for the fake time at; a time not after the fake now fires at once (in
// a goroutine). Reading Now and then calling AfterFunc would put f a whole step late if an
// Advance came in between.
func (c *Fake) AfterFuncAt(at time.Time, f func()) backend.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scheduleLocked(at, f)
}

func (c *Fake) scheduleLocked(at time.Time, f func()) backend.Timer {
	t := &fakeTimer{clock: c, at: at, f: f}
	if !at.After(c.now) {
		go f()
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Stop removes the timer if it has not fired.
func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock forward by d and fires every timer now due, each in its own goroutine.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t)
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		go t.f()
	}
}

// Pending reports how many timers are waiting; tests use it to know a reserve has started
// waiting before they advance the clock.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// AdvanceUntil advances c by step, up to n times, until ch yields, giving ch up to wait in real
// time after each step; ok is false if it never did. Stepping covers news that reaches the
// waiter before or after an advance (a waiter re-arming its timer for a sooner time, say).
func AdvanceUntil[T any](c *Fake, ch <-chan T, step time.Duration, n int, wait time.Duration) (v T, ok bool) {
	for range n {
		c.Advance(step)
		select {
		case v = <-ch:
			return v, true
		case <-time.After(wait):
		}
	}
	return v, false
}
