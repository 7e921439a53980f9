package backend

import "time"

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

// timerLead: while a process is idle, Go's runtime sleeps in its network poller in whole
// milliseconds, so a runtime timer fires up to a millisecond late — a delayed job, a reserve's
// timeout or a TTR would be that late too (beanstalkd's own lateness is about 0.1 ms). So
// AfterFunc arms the runtime timer this much early and sleeps the rest in the kernel.
const timerLead = time.Millisecond

// AfterFunc is time.AfterFunc, made precise to the kernel's timer slack rather than to the
// runtime poller's millisecond.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer {
	due := time.Now().Add(d)
	return time.AfterFunc(d-timerLead, func() {
		if wait := time.Until(due); wait > 0 {
			sleepPrecisely(wait)
		}
		f()
	})
}
