//go:build !linux

package precise

import "time"

// sleep is time.Sleep where nanosleep(2) is not at hand.
func sleep(d time.Duration) { time.Sleep(d) }
