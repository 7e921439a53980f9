package redis

import (
	"context"
	"testing"
	"time"
)

// A waiting reserve's due time counts next − now from when its script was sent, not from when
// its reply came back: the reply may come back long after the script ran (with one batch in
// flight, it waits for the rest of its batch), and the wake-up must not be late by that much.
// Here the script was sent an hour ago and found the next due time a minute after its now, so
// it is due already; counted from now, it would be a minute away.
func TestDueTimeCountsFromWhenTheScriptWasSent(t *testing.T) {
	b := &Backend{}                                   // no injected clock: Redis's now and this process's timers
	const next = int64(1_000_000)                     // ms
	now := (next - time.Minute.Milliseconds()) * 1000 // µs
	due := b.dueTime(next, reserveOutcome{now: now, sent: time.Now().Add(-time.Hour)})
	if d := time.Until(due); d > 0 {
		t.Fatalf("due in %v: counted from now, not from when the script was sent", d)
	}
}

// The reserve script's now is in microseconds: a due time 1.5 ms after it is 1.5 ms (and the
// guard) after the script was sent, not 2 ms, as a now cut to the millisecond made it.
func TestDueTimeCountsFromTheMicrosecond(t *testing.T) {
	sent := time.Unix(1000, 0)
	out := reserveOutcome{now: 1_000_000_500, sent: sent}
	if got, want := out.dueAt(1_000_002), sent.Add(1500*time.Microsecond+dueGuard); !got.Equal(want) {
		t.Fatalf("due at %v, want %v", got, want)
	}
}

// callSent reports when the call's batch was sent: before its reply came back.
func TestCallSentReportsWhenTheBatchWasSent(t *testing.T) {
	b := newInternalBackend(t)
	before := time.Now()
	_, sent, err := b.callSent(context.Background(), opStats)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if sent.Before(before) || sent.After(after) {
		t.Fatalf("sent %v, not between the call's start %v and its return %v", sent, before, after)
	}
}
