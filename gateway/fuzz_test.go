package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// errorCounter counts error-level log records (a recovered panic logs one).
type errorCounter struct{ n atomic.Int64 }

func (h *errorCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *errorCounter) Handle(context.Context, slog.Record) error    { h.n.Add(1); return nil }
func (h *errorCounter) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *errorCounter) WithGroup(string) slog.Handler                { return h }

// FuzzReader sends arbitrary bytes as one client's whole input, then half-closes. Whatever the
// input, the server must neither panic nor hang: every command gets its reply or wait, the
// half-close ends any wait, and the connection closes; the server keeps serving others.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"put 0 0 1 1\r\nx\r\n", "reserve\r\n", "use a\r\nwatch a\r\nignore default\r\n",
		"put 0 0 0 70000 x\r\n", "stats\r\nstats-tube default\r\nstats-job 1\r\n",
		strings.Repeat("a", 300) + "\r\n", "kick -1\r\nkick-job 1\r\n", "pause-tube default 0\r\n",
		"reserve-with-timeout 1\r\n", "put 0 0 0 1\r\nxy\r\n", "list-tubes\r\nquit\r\n", "\x00\r\n\r\r\n",
	} {
		f.Add([]byte(seed))
	}
	errs := &errorCounter{}
	addr, _ := gatewaytest.StartServer(f, newMemoryTB(f), gateway.Config{MaxJobSize: 1 << 16, Logger: slog.New(errs)})
	f.Fuzz(func(t *testing.T, input []byte) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, _ = c.Write(input)
		_ = c.(*net.TCPConn).CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.Copy(io.Discard, c)
		require.NoError(t, err, "the server must answer and close, not hang")
		require.Zero(t, errs.n.Load(), "the server logged an error (panic?)")

		probe := gatewaytest.Dial(t, addr)
		probe.Do("list-tube-used\r\n", "USING default\r\n")
		probe.Close()
	})
}
