package ops_test

import (
	"crypto/tls"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/gateway/ops"
)

// tlsServer serves TLS with a certificate of ca (client certificates of clientCA required
// when it is set), from files in dir that the test may rewrite and reload.
type tlsServer struct {
	*opsServer
	files  *ops.TLSFiles
	dir    string
	ca     *gatewaytest.TestCA
	serial *big.Int
}

func startTLSServer(t *testing.T, clientCA *gatewaytest.TestCA, cfg gateway.Config) *tlsServer {
	t.Helper()
	s := &tlsServer{dir: t.TempDir(), ca: gatewaytest.NewCA(t, "server CA")}
	certPEM, keyPEM, serial := s.ca.Issue(t, "beangate", false)
	s.serial = serial
	certFile := writeFile(t, s.dir, "cert.pem", certPEM)
	keyFile := writeFile(t, s.dir, "key.pem", keyPEM)
	caFile := ""
	if clientCA != nil {
		caFile = writeFile(t, s.dir, "clients.pem", clientCA.PEM)
	}
	files, err := ops.LoadTLS(certFile, keyFile, caFile)
	require.NoError(t, err)
	s.files = files
	cfg.TLS = files.Config()
	s.opsServer = startOpsServer(t, 100, cfg)
	return s
}

// rotate writes a new certificate and key and reloads them, returning the new serial.
func (s *tlsServer) rotate(t *testing.T) *big.Int {
	certPEM, keyPEM, serial := s.ca.Issue(t, "beangate", false)
	writeFile(t, s.dir, "key.pem", keyPEM)
	writeFile(t, s.dir, "cert.pem", certPEM)
	require.NoError(t, s.files.Reload())
	return serial
}

func (s *tlsServer) dial(t *testing.T, certs ...tls.Certificate) (*tls.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", s.addr,
		&tls.Config{RootCAs: s.ca.Pool(), Certificates: certs})
}

// go-beanstalk, unchanged, over a TLS connection: the protocol needs nothing new.
func TestTLSWithARealClient(t *testing.T) {
	t.Parallel()
	s := startTLSServer(t, nil, gateway.Config{})
	tc, err := s.dial(t)
	require.NoError(t, err)
	require.Equal(t, 0, s.serial.Cmp(tc.ConnectionState().PeerCertificates[0].SerialNumber))
	c := beanstalk.NewConn(tc)
	defer c.Close()
	id, err := c.Put([]byte("over tls"), 1, 0, time.Minute)
	require.NoError(t, err)
	gotID, body, err := c.Reserve(time.Second)
	require.NoError(t, err)
	require.Equal(t, id, gotID)
	require.Equal(t, "over tls", string(body))
	require.NoError(t, c.Delete(id))
}

// With a client CA, only clients with a certificate it signed are served.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	clients := gatewaytest.NewCA(t, "client CA")
	stranger := gatewaytest.NewCA(t, "someone else's CA")
	s := startTLSServer(t, clients, gateway.Config{})
	tests := []struct {
		name   string
		certs  []tls.Certificate
		served bool
	}{
		{"SignedByTheClientCA", []tls.Certificate{clients.ClientCert(t)}, true},
		{"NoCertificate", nil, false},
		{"SignedByAnotherCA", []tls.Certificate{stranger.ClientCert(t)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, err := s.dial(t, tt.certs...)
			if err == nil {
				// TLS 1.3: the client's handshake ends before the server checks its
				// certificate; a refusal shows on the first read.
				c := gatewaytest.NewClient(t, tc)
				c.Send("list-tube-used\r\n")
				if tt.served {
					c.Expect("USING default\r\n")
					return
				}
				c.ExpectClosed()
				return
			}
			require.False(t, tt.served, "handshake failed: %v", err)
		})
	}
	// The server counts a refusal as it closes the connection, which the client may see first.
	require.Eventually(t, func() bool {
		return value(scrape(t, s.http), "beangate_connections_rejected_total", labels{"reason": "tls_handshake"}) == 2.0
	}, 2*time.Second, 10*time.Millisecond, "two handshakes refused")
}

// A plain-text client on the TLS port is cut at once (its first bytes are no TLS handshake),
// and a silent one at the handshake timeout: neither hangs.
func TestPlainClientOnTLSPortIsCut(t *testing.T) {
	t.Parallel()
	s := startTLSServer(t, nil, gateway.Config{HandshakeTimeout: 500 * time.Millisecond})

	talker := gatewaytest.Dial(t, s.addr)
	began := time.Now()
	talker.Send("list-tube-used\r\n")
	talker.ExpectClosed()
	require.Less(t, time.Since(began), 400*time.Millisecond, "cut by the handshake, not the timeout")

	silent := gatewaytest.Dial(t, s.addr)
	began = time.Now()
	silent.ExpectClosed()
	require.GreaterOrEqual(t, time.Since(began), 400*time.Millisecond)
	require.Eventually(t, func() bool { return s.srv.Figures().Handshaking == 0 }, 5*time.Second, 10*time.Millisecond)
}

// Certificates reloaded while clients work: no connection drops or fails a command, and new
// connections get the new certificate.
func TestCertificateReloadUnderLoad(t *testing.T) {
	t.Parallel()
	s := startTLSServer(t, nil, gateway.Config{})
	const workers = 4
	var (
		stop   atomic.Bool
		done   sync.WaitGroup
		cycles atomic.Int64
		errs   = make(chan error, workers)
	)
	for range workers {
		tc, err := s.dial(t)
		require.NoError(t, err)
		c := beanstalk.NewConn(tc)
		t.Cleanup(func() { _ = c.Close() })
		done.Go(func() {
			for !stop.Load() {
				_, err := c.Put([]byte("job"), 1, 0, time.Minute)
				var id uint64
				if err == nil {
					id, _, err = c.Reserve(time.Second)
				}
				if err == nil {
					err = c.Delete(id)
				}
				if err != nil {
					errs <- err
					return
				}
				cycles.Add(1)
			}
		})
	}
	for range 5 {
		time.Sleep(50 * time.Millisecond)
		serial := s.rotate(t)
		tc, err := s.dial(t)
		require.NoError(t, err)
		require.Equal(t, 0, serial.Cmp(tc.ConnectionState().PeerCertificates[0].SerialNumber), "a new connection gets the new certificate")
		_ = tc.Close()
	}
	before := cycles.Load()
	time.Sleep(50 * time.Millisecond)
	stop.Store(true)
	done.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "a connection failed during the reloads")
	}
	require.Greater(t, cycles.Load(), before, "the old connections still work after the last reload")
	require.EqualValues(t, workers, s.srv.Figures().Connections, "no connection dropped")
}

// TLS and token auth together: auth inside the TLS session; the connection counts as
// handshaking until it has authenticated.
func TestTLSWithAuth(t *testing.T) {
	t.Parallel()
	tokens, _ := loadTokens(t, "tok\n")
	s := startTLSServer(t, nil, gateway.Config{Auth: tokens.Check})
	tc, err := s.dial(t)
	require.NoError(t, err)
	c := gatewaytest.NewClient(t, tc)
	c.Send("list-tube-used\r\n")
	c.Expect("UNAUTHORIZED\r\n")
	c.ExpectClosed()

	tc, err = s.dial(t)
	require.NoError(t, err)
	c = gatewaytest.NewClient(t, tc)
	require.Eventually(t, func() bool { return s.srv.Figures().Handshaking == 1 }, 5*time.Second, 10*time.Millisecond)
	c.Do("auth tok\r\n", "AUTHENTICATED\r\n")
	c.Do("list-tube-used\r\n", "USING default\r\n")
	require.EqualValues(t, 0, s.srv.Figures().Handshaking)
}
