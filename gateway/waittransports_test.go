package gateway_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A waiting reserve behaves the same over every kind of store and connection: it gets the job a
// put makes ready, commands the client sends meanwhile are answered after its RESERVED, and a
// client that leaves ends the wait. A TLS connection has no RawConn: its socket is watched by a
// goroutine of its own, and its reply is written by the connection's goroutine.
func TestWaitingReserveOverEveryStoreAndTransport(t *testing.T) {
	t.Parallel()
	ca := gatewaytest.NewCA(t, "wait CA")
	certPEM, keyPEM, _ := ca.Issue(t, "gateway", false)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	for _, store := range []struct {
		name string
		open func(t *testing.T) backend.Backend
	}{
		{"memory", newMemory},
		{"store that waits", func(t *testing.T) backend.Backend { return &waitingStore{Backend: newMemory(t)} }},
	} {
		for _, transport := range []struct {
			name string
			tls  *tls.Config
		}{
			{"TCP", nil},
			{"TLS", &tls.Config{Certificates: []tls.Certificate{cert}}},
		} {
			t.Run(store.name+"/"+transport.name, func(t *testing.T) {
				t.Parallel()
				addr, _ := gatewaytest.StartServer(t, store.open(t), gateway.Config{TLS: transport.tls})
				dial := func() *rawClient {
					var nc net.Conn
					var err error
					if transport.tls == nil {
						nc, err = net.Dial("tcp", addr)
					} else {
						nc, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool()})
					}
					require.NoError(t, err)
					t.Cleanup(func() { _ = nc.Close() })
					require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
					return &rawClient{t: t, nc: nc}
				}
				worker, producer, probe := dial(), dial(), dial()
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
