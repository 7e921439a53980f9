package precise

import (
	"syscall"
	"time"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK.
const prSetTimerSlack = 29

// sleep blocks for d in nanosleep(2), bypassing the runtime's millisecond poller. The
// calling thread's timer slack is first cut from the default 50 µs to 1 µs: the sleep is at
// most timerLead long, so the wake-ups it saves the kernel from coalescing are few.
func sleep(d time.Duration) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1000, 0)
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
