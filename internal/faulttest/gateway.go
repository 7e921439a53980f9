package faulttest

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// StartGateway serves b on a fresh loopback port, as the beangate command would (its default
// --backend-timeout of 10 s), until the test ends. Each gateway has a process id of its own, as
// separate gateway processes do.
func StartGateway(t testing.TB, name string, b backend.Backend) Gateway {
	t.Helper()
	addr, _ := gatewaytest.StartServer(t, b, gateway.Config{Sessions: backend.NewSessionIDs()})
	return Gateway{Name: name, Addr: addr, Backend: b}
}

// RequireWakeUp checks that a reserve waiting on waiter is woken by a put through putter at
// once: by the store's notification, not by a poll (a second apart) or the reserve's timeout.
func RequireWakeUp(t testing.TB, waiter, putter Gateway) {
	t.Helper()
	w := gatewaytest.Dial(t, waiter.Addr)
	w.Do("watch wake-up\r\n", "WATCHING 2\r\n")
	w.Do("ignore default\r\n", "WATCHING 1\r\n")
	p := gatewaytest.Dial(t, putter.Addr)
	p.Do("use wake-up\r\n", "USING wake-up\r\n")
	w.Send("reserve-with-timeout 5\r\n")
	time.Sleep(300 * time.Millisecond) // the reserve is waiting by now
	put := time.Now()
	p.Do("put 0 0 10 4\r\nwake\r\n", "INSERTED {n}\r\n")
	w.Expect("RESERVED {n} 4\r\nwake\r\n")
	took := time.Since(put)
	t.Logf("a reserve waiting on %s got a job put through %s after %v", waiter.Name, putter.Name, took.Round(time.Millisecond))
	if took > 400*time.Millisecond {
		t.Errorf("a reserve waiting on %s was not woken by the put through %s: it took %v", waiter.Name, putter.Name, took)
	}
}
