//go:build !linux

package backend

import "time"

// sleepPrecisely is time.Sleep where nanosleep(2) is not at hand.
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
