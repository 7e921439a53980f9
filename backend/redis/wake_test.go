package redis_test

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// startGateway serves b over TCP as a gateway process of its own (its own session ids), and
// returns its address.
func startGateway(t *testing.T, b *beanredis.Backend) string {
	t.Helper()
	addr, _ := gatewaytest.StartServer(t, b, gateway.Config{Sessions: backend.NewSessionIDs()})
	return addr
}

// A reserve waiting on gateway B wakes whenever a job becomes ready through gateway A, for each
// way a job can become ready. B's safety poll is off (an hour), so only the publish and the
// timer for the next due time can deliver: a case that relies on polling times out. The last
// case drops B's publishes and keeps its poll: correctness does not depend on the notification,
// only latency does.
func TestReserveOnOneGatewayWokenByAnother(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		dropPubs bool // B ignores every publish, and its safety poll stays on
		// before runs on A's connection before B's reserve starts waiting; trigger after.
		before, trigger func(a *gatewaytest.Client)
	}{
		{name: "put", trigger: func(a *gatewaytest.Client) {
			a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
		}},
		{name: "release", before: func(a *gatewaytest.Client) {
			a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
			a.Do("reserve\r\n", "RESERVED 1 1\r\nx\r\n")
		}, trigger: func(a *gatewaytest.Client) {
			a.Do("release 1 0 0\r\n", "RELEASED\r\n")
		}},
		{name: "kick of a buried job", before: func(a *gatewaytest.Client) {
			a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
			a.Do("reserve\r\n", "RESERVED 1 1\r\nx\r\n")
			a.Do("bury 1 0\r\n", "BURIED\r\n")
		}, trigger: func(a *gatewaytest.Client) {
			a.Do("kick 1\r\n", "KICKED 1\r\n")
		}},
		{name: "kick-job of a delayed job", before: func(a *gatewaytest.Client) {
			a.Do("put 0 3600 60 1\r\nx\r\n", "INSERTED 1\r\n")
		}, trigger: func(a *gatewaytest.Client) {
			a.Do("kick-job 1\r\n", "KICKED\r\n")
		}},
		{name: "connection with a reservation closed", before: func(a *gatewaytest.Client) {
			a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
			a.Do("reserve\r\n", "RESERVED 1 1\r\nx\r\n")
		}, trigger: func(a *gatewaytest.Client) { a.Close() }},
		// The three due times: B must learn them from its reserve script (or from a publish
		// when one comes sooner than what it knew) and wake by its own timer.
		{name: "delay ends (put while B waits)", trigger: func(a *gatewaytest.Client) {
			a.Do("put 0 1 60 1\r\nx\r\n", "INSERTED 1\r\n")
		}},
		{name: "TTR expires", before: func(a *gatewaytest.Client) {
			a.Do("put 0 0 1 1\r\nx\r\n", "INSERTED 1\r\n")
			a.Do("reserve\r\n", "RESERVED 1 1\r\nx\r\n") // and A never touches it again
		}},
		{name: "pause ends", before: func(a *gatewaytest.Client) {
			a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
			a.Do("pause-tube default 1\r\n", "PAUSED\r\n")
		}},
		{name: "put, publishes lost", dropPubs: true, trigger: func(a *gatewaytest.Client) {
			a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := newPrefix(t)
			ga := newBackend(t, prefix, nil, time.Second)
			gb := newBackend(t, prefix, nil, time.Second)
			if tt.dropPubs {
				beanredis.DropPublishes(gb)
			} else {
				beanredis.SetSafetyPoll(gb, time.Hour)
			}
			a := gatewaytest.Dial(t, startGateway(t, ga))
			b := gatewaytest.Dial(t, startGateway(t, gb))
			if tt.before != nil {
				tt.before(a)
			}
			b.Send("reserve-with-timeout 60\r\n")
			b.ExpectNothing() // it waits
			began := time.Now()
			if tt.trigger != nil {
				tt.trigger(a)
			}
			b.Expect("RESERVED 1 1\r\nx\r\n") // within gatewaytest.ReplyTimeout, far before 60 s
			t.Logf("woken after %v", time.Since(began))
		})
	}
}
