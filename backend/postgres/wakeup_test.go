package postgres

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/stretchr/testify/require"
)

// TestBlockedReserveIsWokenByAJobBecomingReadyOnAnotherGateway: a reserve blocked on gateway B
// is answered when a job becomes ready through gateway A, whichever way it becomes ready, over
// TCP on both sides. B's re-poll is switched off (an hour), so only a NOTIFY from A's commit (or,
// for a job that matures by time alone, the timer B set for the next due moment) can serve it;
// the shared multi-gateway suite's wake-up case would also pass on B's one-second poll.
func TestBlockedReserveIsWokenByAJobBecomingReadyOnAnotherGateway(t *testing.T) {
	t.Parallel()
	const tube = "wake"
	cases := []struct {
		name string
		// prepare runs on A before B waits and returns the job id, or "" when event puts it.
		prepare func(a *gatewaytest.Client) string
		// event makes the job ready through A and returns its id if prepare did not know it.
		event func(a *gatewaytest.Client, id string) string
		// within bounds the wake-up; maturing by time takes the time itself.
		within time.Duration
	}{
		{name: "Put", within: time.Second,
			event: func(a *gatewaytest.Client, _ string) string {
				return idOf(a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n"))
			}},
		{name: "DelayedPutMaturing", within: 2 * time.Second,
			event: func(a *gatewaytest.Client, _ string) string {
				return idOf(a.Do("put 0 1 60 1\r\nx\r\n", "INSERTED {n}\r\n"))
			}},
		{name: "Release", within: time.Second, prepare: reservedOn,
			event: func(a *gatewaytest.Client, id string) string {
				a.Do("release "+id+" 0 0\r\n", "RELEASED\r\n")
				return id
			}},
		{name: "DelayedReleaseMaturing", within: 2 * time.Second, prepare: reservedOn,
			event: func(a *gatewaytest.Client, id string) string {
				a.Do("release "+id+" 0 1\r\n", "RELEASED\r\n")
				return id
			}},
		{name: "KickOfABuriedJob", within: time.Second, prepare: buriedOn,
			event: func(a *gatewaytest.Client, id string) string { a.Do("kick 1\r\n", "KICKED 1\r\n"); return id }},
		{name: "KickJob", within: time.Second, prepare: buriedOn,
			event: func(a *gatewaytest.Client, id string) string { a.Do("kick-job "+id+"\r\n", "KICKED\r\n"); return id }},
		{name: "UnpausedTube", within: time.Second,
			prepare: func(a *gatewaytest.Client) string {
				id := idOf(a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n"))
				a.Do("pause-tube "+tube+" 3600\r\n", "PAUSED\r\n")
				return id
			},
			event: func(a *gatewaytest.Client, id string) string {
				a.Do("pause-tube "+tube+" 0\r\n", "PAUSED\r\n")
				return id
			}},
		// The owner's connection closing ends its session: the job is ready again at once, not at
		// its TTR (an hour).
		{name: "OwnerDisconnects", within: time.Second, prepare: reservedOn,
			event: func(a *gatewaytest.Client, id string) string { a.Close(); return id }},
		{name: "OwnerQuits", within: time.Second, prepare: reservedOn,
			event: func(a *gatewaytest.Client, id string) string { a.Send("quit\r\n"); a.ExpectClosed(); return id }},
		// TTR expiry is a due moment B learns from its attempt: its timer, not a NOTIFY.
		{name: "TTRExpiring", within: 2 * time.Second,
			prepare: func(a *gatewaytest.Client) string {
				id := idOf(a.Do("put 0 0 1 1\r\nx\r\n", "INSERTED {n}\r\n"))
				a.Do("reserve-job "+id+"\r\n", "RESERVED "+id+" 1\r\nx\r\n")
				return id
			},
			event: func(_ *gatewaytest.Client, id string) string { return id }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			schema := testSchema(t)
			gwA, gwB := newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
			gwB.poll = time.Hour
			// Each gateway its own process id, as separate processes have: announcements go
			// only to other live gateway processes.
			addrA, _ := gatewaytest.StartServer(t, gwA, gateway.Config{Sessions: backend.NewSessionIDs()})
			addrB, _ := gatewaytest.StartServer(t, gwB, gateway.Config{Sessions: backend.NewSessionIDs()})
			a, b := dialTube(t, addrA, tube), dialTube(t, addrB, tube)
			var id string
			if c.prepare != nil {
				id = c.prepare(a)
			}
			b.Send("reserve-with-timeout 60\r\n")
			b.ExpectNothing() // it is waiting
			began := time.Now()
			id = c.event(a, id)
			b.Expect("RESERVED " + id + " 1\r\nx\r\n")
			took := time.Since(began)
			t.Logf("woken after %v", took)
			require.Less(t, took, c.within)
		})
	}
}

// dialTube opens a connection that uses and watches only tube.
func dialTube(t *testing.T, addr, tube string) *gatewaytest.Client {
	c := gatewaytest.Dial(t, addr)
	c.Do("use "+tube+"\r\n", "USING "+tube+"\r\n")
	c.Do("watch "+tube+"\r\n", "WATCHING 2\r\n")
	c.Do("ignore default\r\n", "WATCHING 1\r\n")
	return c
}

// reservedOn puts a job with a TTR of an hour and reserves it on a; buriedOn buries it too.
func reservedOn(a *gatewaytest.Client) string {
	id := idOf(a.Do("put 0 0 3600 1\r\nx\r\n", "INSERTED {n}\r\n"))
	a.Do("reserve-job "+id+"\r\n", "RESERVED "+id+" 1\r\nx\r\n")
	return id
}

func buriedOn(a *gatewaytest.Client) string {
	id := reservedOn(a)
	a.Do("bury "+id+" 0\r\n", "BURIED\r\n")
	return id
}

// idOf reads the id of an "INSERTED <id>\r\n" reply.
func idOf(reply string) string {
	return reply[len("INSERTED ") : len(reply)-2]
}
