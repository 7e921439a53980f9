package redis

import (
	"context"
	"testing"
	"time"
)

// A waiting reserve's due timer counts next − now from when its script was sent, not from when
// it is armed: the reply may come back long after the script ran (with one batch in flight, it
// waits for the rest of its batch), and the timer must not be late by that much. Here the
// script was sent an hour ago and found the next due time a minute after its now, so the
// timer is due at once; counted from arming, it would fire in a minute.
func TestDueTimerCountsFromWhenTheScriptWasSent(t *testing.T) {
	b := &Backend{} // no injected clock: Redis's now and this process's timers
	var due dueTimer
	defer due.clearAndStop()
	const now = int64(1_000_000)
	due.arm(b, now+time.Minute.Milliseconds(), now, time.Now().Add(-time.Hour))
	select {
	case <-due.fired():
	case <-time.After(30 * time.Second): // far beyond "at once", far short of the minute
		t.Fatal("the due timer counted from when it was armed, not from when the script was sent")
	}
}

// runSent reports when the call's batch was sent: before its reply came back.
func TestRunSentReportsWhenTheBatchWasSent(t *testing.T) {
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
