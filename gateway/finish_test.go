package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// slowEndStore makes EndSession slow, so that a close before it would be seen.
type slowEndStore struct{ backend.Backend }

func (s slowEndStore) EndSession(ctx context.Context, id backend.SessionID) error {
	time.Sleep(100 * time.Millisecond)
	return s.Backend.EndSession(ctx, id)
}

// TestQuitReturnsJobsBeforeTheClose: beanstalkd returns a quitting conn's reservations before
// anything else happens, so a client that has seen the EOF finds the job ready at once.
func TestQuitReturnsJobsBeforeTheClose(t *testing.T) {
	addr, _ := gatewaytest.StartServer(t, slowEndStore{newMemory(t)}, gateway.Config{})
	a, b := gatewaytest.Dial(t, addr), gatewaytest.Dial(t, addr)
	a.Do("put 0 0 100 1\r\nx\r\nreserve\r\n", "INSERTED 1\r\nRESERVED 1 1\r\nx\r\n")
	a.Send("quit\r\n")
	a.ExpectClosed()
	b.Do("reserve-with-timeout 0\r\n", "RESERVED 1 1\r\nx\r\n")
}
