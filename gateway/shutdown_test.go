package gateway_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// Shutdown cancels waiting reserves: the connections end promptly, not at their timeouts.
func TestShutdownEndsWaitingReserves(t *testing.T) {
	t.Parallel()
	addr, srv := gatewaytest.StartServer(t, newMemory(t), gateway.Config{})
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
		require.NoError(t, err, "closed by the server")
		require.Empty(t, string(rest), "a cancelled wait answers nothing")
	}
}
