package main

import (
	"crypto/tls"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// tlsFiles are a server certificate and key of ca in dir, as --tls-cert and --tls-key name them.
type tlsFiles struct {
	ca             *gatewaytest.TestCA
	dir, cert, key string
	serial         *big.Int
}

func newTLSFiles(t *testing.T) *tlsFiles {
	f := &tlsFiles{ca: gatewaytest.NewCA(t, "server CA"), dir: t.TempDir()}
	f.cert, f.key = filepath.Join(f.dir, "cert.pem"), filepath.Join(f.dir, "key.pem")
	f.rotate(t)
	return f
}

// rotate writes a new certificate and key (each file replaced whole, as a deploy tool does).
func (f *tlsFiles) rotate(t *testing.T) {
	certPEM, keyPEM, serial := f.ca.Issue(t, "beangate", false)
	for path, data := range map[string][]byte{f.key: keyPEM, f.cert: certPEM} {
		require.NoError(t, os.WriteFile(path+".tmp", data, 0o600))
		require.NoError(t, os.Rename(path+".tmp", path))
	}
	f.serial = serial
}

func (f *tlsFiles) dial(t *testing.T, addr net.Addr, certs ...tls.Certificate) (*tls.Conn, error) {
	t.Helper()
	return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr.String(),
		&tls.Config{RootCAs: f.ca.Pool(), Certificates: certs})
}

// servedBy requires the connection to present the certificate of serial.
func servedBy(t *testing.T, c *tls.Conn, serial *big.Int) {
	t.Helper()
	require.Equal(t, 0, serial.Cmp(c.ConnectionState().PeerCertificates[0].SerialNumber),
		"served certificate %v, want %v", c.ConnectionState().PeerCertificates[0].SerialNumber, serial)
}

// roundTrip puts, reserves and deletes one job through go-beanstalk over c.
func roundTrip(t *testing.T, c *beanstalk.Conn, body string) {
	t.Helper()
	id, err := c.Put([]byte(body), 1, 0, time.Minute)
	require.NoError(t, err)
	got, b, err := c.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.Equal(t, body, string(b))
	require.NoError(t, c.Delete(id))
}

// beangate --tls-cert --tls-key: go-beanstalk over tls.Dial, unchanged; SIGHUP swaps the
// certificate for new connections while a connection made before goes on; a plain-text client
// on the TLS port is cut, not left hanging.
func TestTLSFlagsAndSIGHUPReload(t *testing.T) {
	t.Parallel()
	files := newTLSFiles(t)
	s := startServer(t, "-p", "0", "--tls-cert", files.cert, "--tls-key", files.key)
	first := files.serial
	tc, err := files.dial(t, s.addr)
	require.NoError(t, err)
	servedBy(t, tc, first)
	old := beanstalk.NewConn(tc)
	defer old.Close()
	roundTrip(t, old, "over tls")

	files.rotate(t)
	s.signals <- syscall.SIGHUP
	require.Eventually(t, func() bool {
		return strings.Contains(s.stderr.String(), "SIGHUP: TLS certificate reloaded")
	}, 5*time.Second, 10*time.Millisecond)
	tc, err = files.dial(t, s.addr)
	require.NoError(t, err)
	servedBy(t, tc, files.serial)
	fresh := beanstalk.NewConn(tc)
	defer fresh.Close()
	roundTrip(t, fresh, "after the reload")
	roundTrip(t, old, "still on the first certificate") // not dropped

	// A file that does not load keeps the certificate in use, and says so.
	require.NoError(t, os.WriteFile(files.cert, []byte("not a certificate"), 0o600))
	s.signals <- syscall.SIGHUP
	require.Eventually(t, func() bool {
		return strings.Contains(s.stderr.String(), "SIGHUP: TLS files not reloaded; the previous certificate stays")
	}, 5*time.Second, 10*time.Millisecond)
	tc, err = files.dial(t, s.addr)
	require.NoError(t, err)
	servedBy(t, tc, files.serial)
	_ = tc.Close()

	plain := dial(t, s.addr)
	_, err = plain.Write([]byte("list-tube-used\r\n"))
	require.NoError(t, err)
	_, err = plain.r.ReadString('\n')
	require.Error(t, err, "a plain-text client gets no beanstalk reply")
	require.False(t, isTimeout(err), "cut, not left hanging: %v", err)
}

// --tls-client-ca: a client needs a certificate signed by those CAs.
func TestTLSClientCAFlag(t *testing.T) {
	t.Parallel()
	files := newTLSFiles(t)
	clients, stranger := gatewaytest.NewCA(t, "client CA"), gatewaytest.NewCA(t, "someone else's CA")
	caFile := filepath.Join(files.dir, "clients.pem")
	require.NoError(t, os.WriteFile(caFile, clients.PEM, 0o600))
	s := startServer(t, "-p", "0", "--tls-cert", files.cert, "--tls-key", files.key, "--tls-client-ca", caFile)

	tc, err := files.dial(t, s.addr, clients.ClientCert(t))
	require.NoError(t, err)
	c := beanstalk.NewConn(tc)
	defer c.Close()
	roundTrip(t, c, "mutual")

	for name, certs := range map[string][]tls.Certificate{"none": nil, "another CA's": {stranger.ClientCert(t)}} {
		tc, err := files.dial(t, s.addr, certs...)
		if err == nil { // TLS 1.3: the client learns of the refusal at its first read
			_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
			_, err = tc.Write([]byte("list-tube-used\r\n"))
			if err == nil {
				_, err = tc.Read(make([]byte, 64))
			}
			_ = tc.Close()
		}
		require.Error(t, err, "a client with %s certificate is refused", name)
		require.False(t, isTimeout(err), "refused, not left hanging: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
