package main

import (
	"strconv"
	"time"
)

// stampLen is the size of the send-time stamp written at the start of a job body: 16 hex digits
// of nanoseconds since the round's base time. Latency scenarios need bodies at least this long.
const stampLen = 16

// newBody returns a body of n bytes filled with 'x'.
func newBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return b
}

// stamp writes the send time into body when it is long enough to hold it.
func stamp(body []byte, base, now time.Time) {
	if len(body) < stampLen {
		return
	}
	v := uint64(now.Sub(base))
	const digits = "0123456789abcdef"
	for i := stampLen - 1; i >= 0; i-- {
		body[i] = digits[v&0xf]
		v >>= 4
	}
}

// sentAt reads the stamp back; ok is false for bodies without one.
func sentAt(body []byte, base time.Time) (time.Time, bool) {
	if len(body) < stampLen {
		return time.Time{}, false
	}
	v, err := strconv.ParseUint(string(body[:stampLen]), 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return base.Add(time.Duration(v)), true
}

func itoa(i int) string { return strconv.Itoa(i) }
