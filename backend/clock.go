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
