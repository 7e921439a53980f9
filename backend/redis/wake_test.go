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
// timer for the next due time can deliver.
func TestReserveOnOneGatewayWokenByAnother(t *testing.T) {
	requireRedis(t)
	gatewaytest.RunWakeUps(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		prefix := newPrefix(t)
		a, b := newBackend(t, prefix, nil, time.Second), newBackend(t, prefix, nil, time.Second)
		beanredis.SetSafetyPoll(b, time.Hour)
		return a, b
	})
}

// Correctness does not depend on the notification, only latency does: with every publish
// lost, the safety poll still delivers.
func TestReserveWokenByThePollWhenPublishesAreLost(t *testing.T) {
	t.Parallel()
	prefix := newPrefix(t)
	ga, gb := newBackend(t, prefix, nil, time.Second), newBackend(t, prefix, nil, time.Second)
	beanredis.DropPublishes(gb)
	a := gatewaytest.Dial(t, startGateway(t, ga))
	b := gatewaytest.Dial(t, startGateway(t, gb))
	b.Send("reserve-with-timeout 60\r\n")
	b.ExpectNothing() // it waits
	began := time.Now()
	a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
	b.Expect("RESERVED 1 1\r\nx\r\n") // within gatewaytest.ReplyTimeout, far before 60 s
	t.Logf("woken after %v", time.Since(began))
}
