package beanstalk_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/beanstalk"
)

// listen serves each connection accepted on a loopback port with serve, until the test ends.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// answerLines answers every command line with reply, as a plain beanstalk server does.
func answerLines(reply string) func(net.Conn) {
	return func(c net.Conn) { answer(c, bufio.NewReader(c), reply) }
}

// answer answers each line read from r with reply.
func answer(c net.Conn, r *bufio.Reader, reply string) {
	for {
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

// overTLS serves the TLS handshake (with the certificate of ca) and then serve.
func overTLS(t *testing.T, ca *gatewaytest.TestCA, serve func(net.Conn)) func(net.Conn) {
	certPEM, keyPEM, _ := ca.Issue(t, "server", false)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}}
	return func(c net.Conn) {
		tc := tls.Server(c, cfg)
		if tc.Handshake() != nil {
			return // as beangate does: the connection is closed without a word
		}
		serve(tc)
	}
}

// A client that speaks TLS to a plain server, or plain text to a TLS server, is told so, however
// the server shows it: a TLS server cuts the connection at the first command (Go's, beangate's)
// or answers it with an alert (other TLS stacks); a plain server answers the ClientHello with
// an error line, or waits in silence for the end of a line that never comes (beanstalkd,
// beangate). A server that cuts every connection but speaks no TLS is no mismatch.
func TestDialTellsATLSMismatch(t *testing.T) {
	t.Parallel()
	ca := gatewaytest.NewCA(t, "test CA")
	useTLS := beanstalk.Dialer{UseTLS: "use --tls", DropTLS: "drop --tls"}
	withTLS := beanstalk.Dialer{TLS: &tls.Config{RootCAs: ca.Pool()}, UseTLS: "use --tls", DropTLS: "drop --tls"}
	silent := func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }
	tests := []struct {
		name     string
		dialer   beanstalk.Dialer
		serve    func(net.Conn)
		wantErr  string // empty: list-tube-used works
		mismatch bool
	}{
		{"plain to plain", useTLS, answerLines("USING default\r\n"), "", false},
		{"TLS to TLS", withTLS, overTLS(t, ca, answerLines("USING default\r\n")), "", false},
		{"plain to a TLS server that cuts", useTLS, overTLS(t, ca, silent),
			"the server at ADDR speaks TLS; use --tls", true},
		{"plain to a TLS server that sends an alert", useTLS, func(c net.Conn) {
			_, _ = c.Read(make([]byte, 64))
			_, _ = c.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32}) // fatal decode_error
		}, "the server at ADDR speaks TLS; use --tls", true},
		{"plain to a plain server that cuts", useTLS, func(c net.Conn) { _, _ = c.Read(make([]byte, 64)) },
			"EOF", false},
		{"TLS to a plain server that answers", withTLS, answerLines("UNKNOWN_COMMAND\r\n"),
			"the server at ADDR does not speak TLS; drop --tls", true},
		{"TLS to a plain server that waits for a line", withTLS, func(c net.Conn) {
			r := bufio.NewReader(c)
			if b, err := r.Peek(1); err != nil || b[0] == 0x16 {
				_, _ = io.Copy(io.Discard, r) // a ClientHello: no line end in sight
				return
			}
			answer(c, r, "USING default\r\n") // the probe's list-tube-used
		}, "the server at ADDR does not speak TLS; drop --tls", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := listen(t, tt.serve)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			c, err := tt.dialer.Dial(ctx, addr)
			if err == nil {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				c.Send("list-tube-used")
				if err = c.Flush(); err == nil {
					err = c.Expect("USING")
				}
			}
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Less(t, time.Since(start), 5*time.Second, "told, not left waiting")
			var m *beanstalk.TLSMismatchError
			require.Equal(t, tt.mismatch, errors.As(err, &m), "%v", err)
			require.ErrorContains(t, err, strings.ReplaceAll(tt.wantErr, "ADDR", addr))
		})
	}
}

// TLS options: the files are read, a client certificate needs its key, and any option turns
// TLS on.
func TestTLSOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    beanstalk.TLSOptions
		enabled bool
		wantErr string
	}{
		{"off", beanstalk.TLSOptions{}, false, ""},
		{"system roots", beanstalk.TLSOptions{On: true}, true, ""},
		{"server name alone", beanstalk.TLSOptions{ServerName: "q.example"}, true, ""},
		{"cert without key", beanstalk.TLSOptions{Cert: "c.pem"}, true, "give both or neither"},
		{"key without cert", beanstalk.TLSOptions{Key: "k.pem"}, true, "give both or neither"},
		{"missing CA file", beanstalk.TLSOptions{CA: "/nonexistent/ca.pem"}, true, "TLS CA: open /nonexistent/ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.enabled, tt.opts.Enabled())
			cfg, err := tt.opts.Config()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.enabled, cfg != nil)
			if cfg != nil {
				require.Equal(t, tt.opts.ServerName, cfg.ServerName)
			}
		})
	}
}
