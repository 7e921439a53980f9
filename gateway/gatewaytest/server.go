package gatewaytest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// StartServer serves b on a fresh loopback port until the test ends and returns the address.
func StartServer(t testing.TB, b backend.Backend, cfg gateway.Config) (string, *gateway.Server) {
	t.Helper()
	cfg.Backend = b
	srv := gateway.NewServer(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String(), srv
}
