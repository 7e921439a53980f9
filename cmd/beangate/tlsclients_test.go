package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// clientFiles are the PEM files a TLS client of the tools is given: the server's CA, and a
// client certificate and key of the clients' CA.
type clientFiles struct {
	ca, cert, key string
	clientCA      string // the clients' CA, for the server's --tls-client-ca
}

func newClientFiles(t *testing.T, server *tlsFiles) clientFiles {
	dir := t.TempDir()
	clients := gatewaytest.NewCA(t, "client CA")
	certPEM, keyPEM, _ := clients.Issue(t, "worker", true)
	f := clientFiles{ca: filepath.Join(dir, "ca.pem"), cert: filepath.Join(dir, "client.pem"),
		key: filepath.Join(dir, "client-key.pem"), clientCA: filepath.Join(dir, "clients.pem")}
	for path, data := range map[string][]byte{f.ca: server.ca.PEM, f.cert: certPEM, f.key: keyPEM, f.clientCA: clients.PEM} {
		require.NoError(t, os.WriteFile(path, data, 0o600))
	}
	return f
}

// tlsGateways are three beangates of one test: plain, TLS, and TLS requiring client
// certificates, and the files their clients need.
type tlsGateways struct {
	plain, tls, mutual string
	files              clientFiles
	server             *tlsFiles
}

func startTLSGateways(t *testing.T) tlsGateways {
	server := newTLSFiles(t)
	files := newClientFiles(t, server)
	tlsArgs := []string{"-p", "0", "--tls-cert", server.cert, "--tls-key", server.key}
	return tlsGateways{
		plain:  startServer(t, "-p", "0").addr.String(),
		tls:    startServer(t, tlsArgs...).addr.String(),
		mutual: startServer(t, append(tlsArgs, "--tls-client-ca", files.clientCA)...).addr.String(),
		files:  files, server: server,
	}
}

// tlsConn is a go-beanstalk connection to a TLS gateway of g, with a client certificate.
func (g tlsGateways) tlsConn(t *testing.T, addr string) *beanstalk.Conn {
	clientCert, err := tls.LoadX509KeyPair(g.files.cert, g.files.key)
	require.NoError(t, err)
	tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: g.server.ca.Pool(), Certificates: []tls.Certificate{clientCert}})
	require.NoError(t, err)
	c := beanstalk.NewConn(tc)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// beangate ctl speaks TLS to a TLS listener with --tls-ca, presents a client certificate with
// --tls-cert and --tls-key, checks --tls-server-name; a plain ctl on a TLS listener, or a TLS
// ctl on a plain one, is told which way the server speaks.
func TestCtlOverTLS(t *testing.T) {
	t.Parallel()
	g := startTLSGateways(t)
	f := g.files
	tests := []struct {
		name     string
		addr     string
		args     []string
		exit     int
		contains string // in stderr when exit is not 0
	}{
		{"TLS with the server's CA", g.tls, []string{"--tls-ca", f.ca}, 0, ""},
		{"TLS with the server's name", g.tls, []string{"--tls-ca", f.ca, "--tls-server-name", "beangate"}, 0, ""},
		{"mutual TLS", g.mutual, []string{"--tls-ca", f.ca, "--tls-cert", f.cert, "--tls-key", f.key}, 0, ""},
		{"plain", g.plain, nil, 0, ""},
		{"a name the certificate lacks", g.tls, []string{"--tls-ca", f.ca, "--tls-server-name", "elsewhere.example"}, 1,
			"certificate is valid for beangate, not elsewhere.example"},
		{"system roots only", g.tls, []string{"--tls"}, 1, "certificate signed by unknown authority"},
		{"mutual TLS without a client certificate", g.mutual, []string{"--tls-ca", f.ca}, 1, "certificate required"},
		{"plain to TLS", g.tls, nil, 1, "the server at " + g.tls + " speaks TLS; use --tls"},
		{"plain to mutual TLS", g.mutual, nil, 1, "the server at " + g.mutual + " speaks TLS; use --tls"},
		{"TLS to plain", g.plain, []string{"--tls-ca", f.ca}, 1, "the server at " + g.plain + " does not speak TLS; drop --tls"},
		{"a certificate without its key", g.mutual, []string{"--tls-ca", f.ca, "--tls-cert", f.cert}, 2,
			"--tls-cert and --tls-key: a client certificate and its key go together"},
		{"a CA file that is not one", g.tls, []string{"--tls-ca", f.key}, 1, "no PEM certificate in it"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tube := "t" + strconv.Itoa(i)
			ctl := func(args ...string) (int, string, string) {
				return runArgs(t, append(append([]string{"ctl", "-a", tt.addr}, tt.args...), args...)...)
			}
			start := time.Now()
			exit, stdout, stderr := ctl("put", tube, "over the wire")
			if tt.exit != 0 {
				require.Equal(t, tt.exit, exit, "stdout %q, stderr %q", stdout, stderr)
				require.Contains(t, stderr, tt.contains)
				require.NotContains(t, stderr, "EOF")
				require.Less(t, time.Since(start), 4*time.Second, "told, not left waiting")
				return
			}
			require.Equal(t, 0, exit, stderr)
			require.Regexp(t, `^inserted \d+\n$`, stdout)
			exit, stdout, stderr = ctl("tubes")
			require.Equal(t, 0, exit, stderr)
			require.Regexp(t, tube+`\s+1\s`, stdout)
			exit, stdout, stderr = ctl("peek", tube, "--state", "ready")
			require.Equal(t, 0, exit, stderr)
			require.Contains(t, stdout, "over the wire")
		})
	}
}

// BEANGATE_CTL_TLS* set what the flags set.
func TestCtlTLSFromTheEnvironment(t *testing.T) {
	g := startTLSGateways(t)
	tests := []struct {
		name     string
		env      map[string]string
		addr     string
		exit     int
		contains string
	}{
		{"CA, certificate and key", map[string]string{"BEANGATE_CTL_TLS_CA": g.files.ca,
			"BEANGATE_CTL_TLS_CERT": g.files.cert, "BEANGATE_CTL_TLS_KEY": g.files.key,
			"BEANGATE_CTL_TLS_SERVER_NAME": "beangate"}, g.mutual, 0, ""},
		{"TLS on, system roots", map[string]string{"BEANGATE_CTL_TLS": "true"}, g.tls, 1, "certificate signed by unknown authority"},
		{"TLS on, to a plain server", map[string]string{"BEANGATE_CTL_TLS": "1"}, g.plain, 1, "does not speak TLS"},
		{"not a boolean", map[string]string{"BEANGATE_CTL_TLS": "yes please"}, g.tls, 2, `BEANGATE_CTL_TLS="yes please": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			exit, stdout, stderr := runArgs(t, "ctl", "-a", tt.addr, "stats")
			require.Equal(t, tt.exit, exit, "stderr %q", stderr)
			if tt.exit == 0 {
				require.Contains(t, stdout, "current-connections:")
			} else {
				require.Contains(t, stderr, tt.contains)
			}
		})
	}
}

// With --api an https:// URL (a TLS proxy in front of the ops listener, here asking for client
// certificates), ctl's TLS options serve the API as they serve the beanstalk connection.
func TestCtlAPIOverHTTPS(t *testing.T) {
	t.Parallel()
	server := newTLSFiles(t)
	files := newClientFiles(t, server)
	s := startServer(t, "-p", "0", "--tls-cert", server.cert, "--tls-key", server.key,
		"--http", "127.0.0.1:0", "--console-password-hash", consoleHash(t))
	ops, err := url.Parse("http://" + s.opsAddr.String())
	require.NoError(t, err)
	proxy := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(ops))
	pair, err := tls.LoadX509KeyPair(server.cert, server.key)
	require.NoError(t, err)
	clients, err := os.ReadFile(files.clientCA)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(clients))
	proxy.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	proxy.StartTLS()
	t.Cleanup(proxy.Close)

	tlsArgs := []string{"--tls-ca", files.ca, "--tls-cert", files.cert, "--tls-key", files.key}
	plainURL := "http://" + strings.TrimPrefix(proxy.URL, "https://")
	tests := []struct {
		name     string
		args     []string
		exit     int
		contains string // in stdout when exit is 0, else in stderr
	}{
		{"put over the protocol", append(tlsArgs, "put", "mail", "hello"), 0, "inserted 1"},
		{"list over the API", append(tlsArgs, "list", "mail"), 0, "hello"},
		{"without the CA", []string{"list", "mail"}, 1, "certificate signed by unknown authority"},
		{"without a client certificate", []string{"--tls-ca", files.ca, "list", "mail"}, 1, "certificate required"},
		{"http:// to HTTPS", append(append([]string{"--api", plainURL}, tlsArgs...), "list", "mail"), 1, "the server at " + plainURL + " speaks HTTPS; use https:// in --api"},
	}
	for _, tt := range tests { // in order: list finds what put put
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"ctl", "-a", s.addr.String(), "--api", proxy.URL, "--password", "s3cret"}, tt.args...)
			exit, stdout, stderr := runArgs(t, args...)
			require.Equal(t, tt.exit, exit, "stdout %q, stderr %q", stdout, stderr)
			if tt.exit == 0 {
				require.Contains(t, stdout, tt.contains)
			} else {
				require.Contains(t, stderr, tt.contains)
			}
		})
	}
}
