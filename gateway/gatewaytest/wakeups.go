package gatewaytest

import (
	"strconv"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
)

// RunWakeUps checks, for each way a job can become ready, that a reserve waiting on gateway B
// is answered when the job becomes ready through gateway A, over TCP on both sides.
//
// newPair returns two Backends on one namespace, as two gateway processes would have, and
// registers their cleanup. B must not poll the store on its own (its safety re-poll set to an
// hour, say): then only the backend's notification (for what A does) or B's timer for the
// next due moment it learnt (for what time alone does) can serve the reserve, and a case that
// would only pass by polling runs into ReplyTimeout instead. Cases run in parallel.
func RunWakeUps(t *testing.T, newPair func(t *testing.T) (a, b backend.Backend)) {
	cases := []struct {
		name string
		// prepare runs on A before B waits and returns the job's id, or "" when event puts it.
		prepare func(a *Client, tube string) string
		// event makes the job ready through A (or not at all, when time will) and returns its id.
		event func(a *Client, tube, id string) string
	}{
		{name: "Put", event: func(a *Client, _, _ string) string { return putOn(a, 0) }},
		{name: "Release", prepare: reservedOn, event: func(a *Client, _, id string) string {
			a.Do("release "+id+" 0 0\r\n", "RELEASED\r\n")
			return id
		}},
		{name: "KickOfABuriedJob", prepare: buriedOn, event: func(a *Client, _, id string) string {
			a.Do("kick 1\r\n", "KICKED 1\r\n")
			return id
		}},
		{name: "KickJobOfABuriedJob", prepare: buriedOn, event: func(a *Client, _, id string) string {
			a.Do("kick-job "+id+"\r\n", "KICKED\r\n")
			return id
		}},
		{name: "KickJobOfADelayedJob", prepare: func(a *Client, _ string) string { return putOn(a, 3600) },
			event: func(a *Client, _, id string) string {
				a.Do("kick-job "+id+"\r\n", "KICKED\r\n")
				return id
			}},
		{name: "TubeUnpaused", prepare: pausedWithAJob(3600), event: func(a *Client, tube, id string) string {
			a.Do("pause-tube "+tube+" 0\r\n", "PAUSED\r\n")
			return id
		}},
		// The owner's connection ending ends its session: the job is ready again at once, not
		// at its TTR (an hour).
		{name: "OwnerDisconnects", prepare: reservedOn, event: func(a *Client, _, id string) string {
			a.Close()
			return id
		}},
		{name: "OwnerQuits", prepare: reservedOn, event: func(a *Client, _, id string) string {
			a.Send("quit\r\n")
			a.ExpectClosed()
			return id
		}},
		// Due moments: B learns them from its own attempt (or from a notification, when one
		// comes sooner than what it knew) and wakes by its timer.
		{name: "DelayedPutMatures", event: func(a *Client, _, _ string) string { return putOn(a, 1) }},
		{name: "DelayedReleaseMatures", prepare: reservedOn, event: func(a *Client, _, id string) string {
			a.Do("release "+id+" 0 1\r\n", "RELEASED\r\n")
			return id
		}},
		{name: "TTRExpires", prepare: func(a *Client, _ string) string {
			id := idOf(a.t, a.Do("put 0 0 1 1\r\nx\r\n", "INSERTED {n}\r\n"))
			a.Do("reserve-job "+id+"\r\n", "RESERVED "+id+" 1\r\nx\r\n") // and A never touches it again
			return id
		}, event: func(_ *Client, _, id string) string { return id }},
		{name: "PauseEnds", prepare: pausedWithAJob(1), event: func(_ *Client, _, id string) string { return id }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tube := tubeFor(t)
			ga, gb := newPair(t)
			a, b := startGateway(t, ga).dial(tube), startGateway(t, gb).dial(tube)
			var id string
			if c.prepare != nil {
				id = c.prepare(a, tube)
			}
			b.Send("reserve-with-timeout 60\r\n")
			b.ExpectNothing() // it waits
			began := time.Now()
			id = c.event(a, tube, id)
			b.Expect("RESERVED " + id + " 1\r\nx\r\n") // within ReplyTimeout, far before the 60 s
			t.Logf("woken after %v", time.Since(began))
		})
	}
}

// putOn puts a one-byte job with delay seconds and a TTR of an hour, and returns its id.
func putOn(a *Client, delay int) string {
	return idOf(a.t, a.Do("put 0 "+strconv.Itoa(delay)+" 3600 1\r\nx\r\n", "INSERTED {n}\r\n"))
}

// reservedOn puts a job and reserves it on a; buriedOn buries it too.
func reservedOn(a *Client, _ string) string {
	id := putOn(a, 0)
	a.Do("reserve-job "+id+"\r\n", "RESERVED "+id+" 1\r\nx\r\n")
	return id
}

func buriedOn(a *Client, tube string) string {
	id := reservedOn(a, tube)
	a.Do("bury "+id+" 0\r\n", "BURIED\r\n")
	return id
}

// pausedWithAJob puts a ready job in the tube and pauses the tube for seconds.
func pausedWithAJob(seconds int) func(a *Client, tube string) string {
	return func(a *Client, tube string) string {
		id := putOn(a, 0)
		a.Do("pause-tube "+tube+" "+strconv.Itoa(seconds)+"\r\n", "PAUSED\r\n")
		return id
	}
}
