package faulttest

import (
	"testing"

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
	return Gateway{Name: name, Addr: addr}
}
