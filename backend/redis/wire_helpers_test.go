package redis_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// wireConn is a raw protocol connection that reads any reply, body included, without knowing
// it in advance (gatewaytest.Client matches exact replies; stats replies vary).
type wireConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialWire(t *testing.T, addr string) *wireConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, gatewaytest.ReplyTimeout)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return &wireConn{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// do sends one command (line without CRLF; a put's body after "\r\n") and returns its reply
// line and body (without their CRLFs; the body is "" for replies without one).
func (w *wireConn) do(cmd string) (line, body string) {
	w.t.Helper()
	require.NoError(w.t, w.nc.SetDeadline(time.Now().Add(gatewaytest.ReplyTimeout)))
	_, err := w.nc.Write([]byte(cmd + "\r\n"))
	require.NoError(w.t, err)
	line, body, err = gatewaytest.ReadReply(w.r)
	require.NoError(w.t, err)
	return line, body
}

// yaml runs a command answered with a YAML dictionary (stats, stats-tube, stats-job) and
// returns its keys and values (quotes removed).
func (w *wireConn) yaml(cmd string) map[string]string {
	w.t.Helper()
	line, body := w.do(cmd)
	require.True(w.t, strings.HasPrefix(line, "OK "), "%s: %s", cmd, line)
	m := map[string]string{}
	for _, l := range strings.Split(body, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = strings.Trim(v, `"`)
		}
	}
	return m
}
