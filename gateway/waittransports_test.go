package gateway_test

import (
	"bufio"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A waiting reserve behaves the same over every kind of store and connection: it gets the job a
// put makes ready, commands the client sends meanwhile are answered after its RESERVED, and a
// client that leaves ends the wait. A TLS connection has no RawConn: its socket is watched by a
// goroutine of its own, and its reply is written by the connection's goroutine.
func TestWaitingReserveOverEveryStoreAndTransport(t *testing.T) {
	t.Parallel()
	for _, store := range storeKinds {
		for _, tr := range transports(t) {
			t.Run(store.name+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				addr, _ := gatewaytest.StartServer(t, store.open(t), gateway.Config{TLS: tr.server})
				worker, producer, probe := tr.dial(t, addr), tr.dial(t, addr), tr.dial(t, addr)
				pr := bufio.NewReader(probe.nc)

				worker.send("reserve\r\n")
				requireWaiting(t, probe.nc, pr, 1)
				worker.send("list-tube-used\r\n") // read while the reserve waits
				producer.do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
				worker.expect("RESERVED 1 1\r\nx\r\nUSING default\r\n")
				requireWaiting(t, probe.nc, pr, 0)
				worker.do("delete 1\r\n", "DELETED\r\n")

				worker.send("reserve-with-timeout 3600\r\n")
				requireWaiting(t, probe.nc, pr, 1)
				require.NoError(t, worker.nc.Close())
				requireWaiting(t, probe.nc, pr, 0)
				producer.do("put 0 0 60 1\r\ny\r\n", "INSERTED 2\r\n")
				probe.send("peek-ready\r\n")
				got := make([]byte, len("FOUND 2 1\r\ny\r\n"))
				_, err := io.ReadFull(pr, got)
				require.NoError(t, err)
				require.Equal(t, "FOUND 2 1\r\ny\r\n", string(got), "not handed to the worker that left")
			})
		}
	}
}
