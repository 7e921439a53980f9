package gateway_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A waiting reserve is answered by the goroutine that delivers the job — here the producer's,
// inside its put. A consumer that does not read must not hold that goroutine up: its put is
// answered while the RESERVED reply, far larger than the socket takes, is still unsent, and
// the consumer then gets the whole reply and goes on as usual.
func TestDeliveryToASlowReaderDoesNotHoldUpThePut(t *testing.T) {
	t.Parallel()
	const size = 6 << 20 // more than loopback's largest send buffer (tcp_wmem max, 4 MiB)
	addr, _ := gatewaytest.StartServer(t, newMemory(t), gateway.Config{MaxJobSize: size})

	smallWindow := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	consumer, err := smallWindow.Dial("tcp", addr)
	require.NoError(t, err)
	defer consumer.Close()
	producer, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer producer.Close()
	pr := bufio.NewReader(producer)
	deadline := func(nc net.Conn) { require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second))) }
	deadline(consumer)
	deadline(producer)

	_, err = io.WriteString(consumer, "reserve\r\n")
	require.NoError(t, err)
	requireWaiting(t, producer, pr, 1)

	body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	_, err = fmt.Fprintf(producer, "put 0 0 60 %d\r\n%s\r\n", size, body)
	require.NoError(t, err)
	line, err := pr.ReadString('\n')
	require.NoError(t, err, "the put must be answered while the consumer reads nothing")
	var id uint64
	_, err = fmt.Sscanf(line, "INSERTED %d\r\n", &id)
	require.NoError(t, err, line)

	cr := bufio.NewReader(consumer)
	line, err = cr.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("RESERVED %d %d\r\n", id, size), line)
	got := make([]byte, size+2)
	_, err = io.ReadFull(cr, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(body, got[:size]), "the body arrived altered")
	require.Equal(t, "\r\n", string(got[size:]))

	_, err = fmt.Fprintf(consumer, "delete %d\r\n", id)
	require.NoError(t, err)
	line, err = cr.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "DELETED\r\n", line)
}

// requireWaiting polls stats over probe (read through pr) until the server counts n
// connections in current-waiting.
func requireWaiting(t *testing.T, probe io.Writer, pr *bufio.Reader, n int) {
	t.Helper()
	want := fmt.Sprintf("\ncurrent-waiting: %d\n", n)
	require.Eventually(t, func() bool {
		_, err := io.WriteString(probe, "stats\r\n")
		require.NoError(t, err)
		return strings.Contains(readStats(t, pr), want)
	}, 10*time.Second, 5*time.Millisecond, "current-waiting never became %d", n)
}

// readStats reads one stats reply and returns its YAML.
func readStats(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	var n int
	_, err = fmt.Sscanf(line, "OK %d\r\n", &n)
	require.NoError(t, err, line)
	yaml := make([]byte, n+2)
	_, err = io.ReadFull(r, yaml)
	require.NoError(t, err)
	return string(yaml[:n])
}
