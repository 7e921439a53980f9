package backend

import (
	"time"

	"github.com/beangate/beangate/internal/precise"
)

// Clock is the source of time for a backend, injectable so that tests run in milliseconds. Redis
// and Postgres backends read the store's own clock in production (so that gateways agree without
// host clock sync) and use a Clock only when one is injected.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// AtClock is a Clock that can also call f at a time of its own rather than after a duration.
// clocktest.Fake is one: a test may advance it by a whole step between a caller's Now and its
// AfterFunc, which would set the timer that whole step late.
type AtClock interface {
	Clock
	// AfterFuncAt calls f in its own goroutine once the clock reaches at (at once if it has).
	AfterFuncAt(at time.Time, f func()) Timer
}

// AfterFuncAt calls f once c reaches at: in one step on an AtClock; otherwise at − Now() from
// now, which on a clock that moves continuously is late only by the moment between the two.
func AfterFuncAt(c Clock, at time.Time, f func()) Timer {
	if a, ok := c.(AtClock); ok {
		return a.AfterFuncAt(at, f)
	}
	return c.AfterFunc(max(at.Sub(c.Now()), 0), f)
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not happened yet, reporting whether it did so.
	Stop() bool
}

// SystemClock is the real wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc made precise to the kernel's timer slack rather than to the
// runtime poller's millisecond (internal/precise), so that delays, timeouts and TTRs are as
// punctual as beanstalkd's.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return precise.AfterFunc(d, f) }
