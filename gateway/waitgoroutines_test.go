package gateway_test

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// Over the memory store a waiting reserve costs no goroutine of its own: the connection's
// goroutine watches the socket and the store hands the job over from the put's goroutine. So
// many idle workers cost what many idle connections cost.
func TestWaitingReservesNeedNoGoroutineOverMemory(t *testing.T) {
	const workers = 200
	addr, srv := gatewaytest.StartServer(t, newMemory(t), gateway.Config{})
	conns := make([]net.Conn, workers)
	for i := range conns {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		require.NoError(t, nc.SetDeadline(time.Now().Add(30*time.Second)))
		_, err = io.WriteString(nc, "use default\r\n") // the connection is served from here on
		require.NoError(t, err)
		line, err := bufio.NewReader(nc).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "USING default\r\n", line)
		conns[i] = nc
	}
	idle := settledGoroutines()
	for _, nc := range conns {
		_, err := io.WriteString(nc, "reserve\r\n")
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return srv.TubeWaiting("default") == workers }, 10*time.Second, time.Millisecond)
	waiting := settledGoroutines()
	require.LessOrEqual(t, waiting-idle, workers/10, "goroutines: %d with idle connections, %d with their reserves waiting", idle, waiting)
}

// settledGoroutines counts the goroutines once short-lived ones have had time to end.
func settledGoroutines() int {
	time.Sleep(100 * time.Millisecond)
	return runtime.NumGoroutine()
}
