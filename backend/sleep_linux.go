package backend

import (
	"syscall"
	"time"
)

// sleepPrecisely blocks for d in nanosleep(2), bypassing the runtime's millisecond poller.
func sleepPrecisely(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
