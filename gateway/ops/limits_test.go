package ops_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// Beyond --max-connections a new connection is closed at once and counted; once one leaves,
// the next is served.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{MaxConnections: 3})
	var open []*gatewaytest.Client
	for range 3 {
		c := gatewaytest.Dial(t, s.addr)
		c.Do("list-tube-used\r\n", "USING default\r\n")
		open = append(open, c)
	}
	extra := gatewaytest.Dial(t, s.addr)
	extra.ExpectClosed()
	require.Equal(t, 1.0, value(scrape(t, s.http), "beangate_connections_rejected_total", labels{"reason": "max_connections"}))

	open[0].Close()
	require.Eventually(t, func() bool { return s.srv.Figures().Connections == 2 }, 5*time.Second, 10*time.Millisecond)
	gatewaytest.Dial(t, s.addr).Do("list-tube-used\r\n", "USING default\r\n")
	open[1].Do("list-tube-used\r\n", "USING default\r\n") // the others were never disturbed
}

// A flood of idle connections, with auth on: beyond --max-handshaking they are closed at
// once, the rest when the handshake timeout passes; a real client is served all along as
// soon as there is room, and afterwards nothing is left over.
func TestIdleFloodIsBounded(t *testing.T) {
	t.Parallel()
	tokens, _ := loadTokens(t, "tok\n")
	const (
		limit   = 20
		flood   = 200
		timeout = time.Second
	)
	s := startOpsServer(t, 100, gateway.Config{Auth: tokens.Check, MaxHandshaking: limit, HandshakeTimeout: timeout})
	// One client authenticated before the flood keeps working through it.
	worker := gatewaytest.Dial(t, s.addr)
	worker.Do("auth tok\r\n", "AUTHENTICATED\r\n")

	began := time.Now()
	conns := make([]net.Conn, 0, flood)
	for range flood {
		nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		conns = append(conns, nc)
	}
	worker.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
	// On a slow machine the first flood connections may time out before the last are dialed,
	// freeing slots for later ones; what must hold is that never more than the limit wait.
	require.LessOrEqual(t, s.srv.Figures().Handshaking, int64(limit))

	// Every flood connection ends: at once beyond the limit, at the timeout within it.
	for _, nc := range conns {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
		buf := make([]byte, 64)
		for {
			_, err := nc.Read(buf)
			if err != nil {
				var ne net.Error
				require.False(t, errorsAs(err, &ne) && ne.Timeout(), "a flood connection was never closed")
				break
			}
		}
	}
	require.Less(t, time.Since(began), timeout+3*time.Second)
	require.Eventually(t, func() bool { return s.srv.Figures().Handshaking == 0 }, 5*time.Second, 10*time.Millisecond)
	// Every flood connection was turned away exactly once: at once, or at the timeout.
	f := s.srv.Figures()
	require.EqualValues(t, flood, f.Rejected[gateway.RejectHandshakeLimit]+f.Rejected[gateway.RejectAuthTimeout])
	require.GreaterOrEqual(t, f.Rejected[gateway.RejectAuthTimeout], uint64(limit))
	require.Positive(t, f.Rejected[gateway.RejectHandshakeLimit])

	fresh := gatewaytest.Dial(t, s.addr)
	fresh.Do("auth tok\r\n", "AUTHENTICATED\r\n")
	fresh.Do("reserve-with-timeout 0\r\n", "RESERVED {n} 1\r\nx\r\n")
	worker.Do("list-tube-used\r\n", "USING default\r\n")
}
