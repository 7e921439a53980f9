package redis

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/beangate/beangate/internal/rawconn"
)

// rawDialer dials Redis as go-redis would (its timeout and keep-alive), with the socket's reads
// and writes made raw (internal/rawconn: they no longer wake the runtime's monitor thread on
// every round trip), then TLS on top when tlsConfig is set.
func rawDialer(dialTimeout time.Duration, tlsConfig *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 5 * time.Minute}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c = rawconn.Wrap(c)
		if tlsConfig == nil {
			return c, nil
		}
		cfg := tlsConfig
		if cfg.ServerName == "" {
			// As tls.Dial: verify the certificate against the host dialed.
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
}
