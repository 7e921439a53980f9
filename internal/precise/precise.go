// Package precise has timers that fire on time to the kernel's timer slack rather than to the Go
// runtime's millisecond: while a process is idle, the runtime sleeps in its network poller in
// whole milliseconds, so a runtime timer fires up to a millisecond late — a delayed job, a
// reserve's timeout or a TTR would be that late too (beanstalkd's own lateness is about 0.1 ms).
package precise

import "time"

// timerLead is how much early AfterFunc arms the runtime's timer; the rest is slept in the
// kernel.
const timerLead = time.Millisecond

// AfterFunc is time.AfterFunc, made precise to the kernel's timer slack: f never runs before d
// has passed.
func AfterFunc(d time.Duration, f func()) *time.Timer {
	due := time.Now().Add(d)
	return time.AfterFunc(d-timerLead, func() {
		if wait := time.Until(due); wait > 0 {
			sleep(wait)
		}
		f()
	})
}
