package gateway_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// Shutdown ends waiting reserves with TIMED_OUT (what beanstalkd answers a waiting client that
// half-closes), then closes the connections: promptly, not at the reserves' timeouts.
func TestShutdownEndsWaitingReserves(t *testing.T) {
	t.Parallel()
	for _, store := range storeKinds {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			addr, srv := gatewaytest.StartServer(t, store.open(t), gateway.Config{})
			var conns []net.Conn
			for _, cmd := range []string{"reserve\r\n", "reserve-with-timeout 3600\r\n"} {
				nc, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				defer nc.Close()
				_, err = io.WriteString(nc, cmd)
				require.NoError(t, err)
				conns = append(conns, nc)
			}
			probe, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer probe.Close()
			pr := bufio.NewReader(probe)
			requireWaiting(t, probe, pr, 2) // both reserves wait before the shutdown
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.NoError(t, srv.Shutdown(ctx), "connections must end before the shutdown limit")
			for _, nc := range conns {
				require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
				rest, err := io.ReadAll(nc)
				require.NoError(t, err, "closed by the server, cleanly")
				require.Equal(t, "TIMED_OUT\r\n", string(rest))
			}
		})
	}
}

// slowDeleteStore holds each Delete until release is closed, after telling entered.
type slowDeleteStore struct {
	backend.Backend
	entered chan struct{}
	release chan struct{}
}

func (s slowDeleteStore) Delete(ctx context.Context, session backend.SessionID, id uint64) error {
	s.entered <- struct{}{}
	<-s.release
	return s.Backend.Delete(ctx, session, id)
}

// A graceful stop answers every command that has reached the connection: the one running (its
// backend call is not cancelled), those received behind it, and one whose rest arrives after the
// stop began; then each connection ends with a clean close (EOF, also for what the client sends
// after it: no reset), over TCP and over TLS.
func TestShutdownAnswersWhatHasArrived(t *testing.T) {
	t.Parallel()
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			store := slowDeleteStore{newMemory(t), make(chan struct{}, 1), make(chan struct{})}
			addr, srv := gatewaytest.StartServer(t, store, gateway.Config{TLS: tr.server})
			busy, partial, idle := tr.dial(t, addr), tr.dial(t, addr), tr.dial(t, addr)
			busy.do("put 0 0 60 1\r\nx\r\nreserve\r\n", "INSERTED 1\r\nRESERVED 1 1\r\nx\r\n")
			idle.do("list-tube-used\r\n", "USING default\r\n")
			busy.send("delete 1\r\n")
			<-store.entered
			busy.send("put 0 0 60 2\r\nhi\r\nlist-tube-used\r\n") // received behind the delete
			partial.send("list-tube")

			stopped := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				stopped <- srv.Shutdown(ctx)
			}()
			require.Eventually(t, func() bool { // the listener is closed: the stop has begun
				nc, err := net.Dial("tcp", addr)
				if err == nil {
					_ = nc.Close()
				}
				return err != nil
			}, 5*time.Second, time.Millisecond)
			partial.send("-used\r\n")
			close(store.release)

			busy.expect("DELETED\r\nINSERTED 2\r\nUSING default\r\n")
			partial.expect("USING default\r\n")
			for _, c := range []*rawClient{busy, partial, idle} {
				c.expectEOF()
			}
			busy.send("list-tubes\r\n") // after the end: dropped, and still no reset
			busy.expectEOF()
			select {
			case err := <-stopped:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Shutdown did not return")
			}
		})
	}
}

// transport is a kind of connection a server takes: plain TCP, or TLS with a certificate of a
// test CA.
type transport struct {
	name   string
	server *tls.Config // nil: plain TCP
	client *tls.Config
}

// transports are plain TCP and TLS.
func transports(t *testing.T) []transport {
	ca := gatewaytest.NewCA(t, "test CA")
	certPEM, keyPEM, _ := ca.Issue(t, "gateway", false)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return []transport{
		{name: "TCP"},
		{name: "TLS", server: &tls.Config{Certificates: []tls.Certificate{cert}}, client: &tls.Config{RootCAs: ca.Pool()}},
	}
}

// dial connects to addr over tr, closed when the test ends, with a 10 s deadline.
func (tr transport) dial(t *testing.T, addr string) *rawClient {
	t.Helper()
	var nc net.Conn
	var err error
	if tr.server == nil {
		nc, err = net.Dial("tcp", addr)
	} else {
		nc, err = tls.Dial("tcp", addr, tr.client)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	return &rawClient{t: t, nc: nc}
}

// rawClient is a connection that checks the exact bytes it gets back, and how it ends.
type rawClient struct {
	t  *testing.T
	nc net.Conn
}

func (c *rawClient) send(s string) {
	c.t.Helper()
	_, err := io.WriteString(c.nc, s)
	require.NoError(c.t, err)
}

func (c *rawClient) expect(want string) {
	c.t.Helper()
	got := make([]byte, len(want))
	_, err := io.ReadFull(c.nc, got)
	require.NoError(c.t, err, "after %q", got)
	require.Equal(c.t, want, string(got))
}

func (c *rawClient) do(send, want string) {
	c.t.Helper()
	c.send(send)
	c.expect(want)
}

// expectEOF requires the connection's next read to be its clean end: no byte, no reset.
func (c *rawClient) expectEOF() {
	c.t.Helper()
	n, err := c.nc.Read(make([]byte, 64))
	require.Zero(c.t, n)
	require.True(c.t, errors.Is(err, io.EOF), "want the end of the connection, got %v", err)
}
