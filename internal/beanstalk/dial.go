package beanstalk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// Dialer connects to beanstalk servers, in plain text or over TLS. It is the one place beangate's
// tools dial a server, so that each of them tells a TLS server from a plain one the same way.
type Dialer struct {
	// TLS, when set, makes every connection TLS with this configuration (its ServerName defaults
	// to the address's host). Nil: plain text.
	TLS *tls.Config
	// Timeout bounds the connect and the TLS handshake, besides the context. Zero: none.
	Timeout time.Duration
	// UseTLS and DropTLS end the error of a connection that does not speak what the server
	// speaks: how the tool's user turns TLS on ("use --tls") or off ("drop --tls").
	UseTLS, DropTLS string
}

// Dial connects to a beanstalk server at addr ("host:port") in plain text.
func Dial(ctx context.Context, addr string) (*Conn, error) { return Dialer{}.Dial(ctx, addr) }

// TLSMismatchError is a connection refused because the server speaks TLS and the client does
// not, or the reverse.
type TLSMismatchError struct {
	Addr      string
	ServerTLS bool   // the server speaks TLS and the client did not; false: the reverse
	Advice    string // how to connect instead
}

func (e *TLSMismatchError) Error() string {
	msg := "the server at " + e.Addr + " does not speak TLS"
	if e.ServerTLS {
		msg = "the server at " + e.Addr + " speaks TLS"
	}
	if e.Advice != "" {
		msg += "; " + e.Advice
	}
	return msg
}

// probeTimeout bounds a second connection made to learn what a server speaks.
const probeTimeout = 3 * time.Second

// probeAfter is how long a TLS handshake may go unanswered before the server is asked, on a
// second connection, whether it speaks plain beanstalk: a plain server waits in silence for the
// end of a command line that the ClientHello never sends, while a TLS server answers it in one
// round trip.
const probeAfter = 500 * time.Millisecond

// Dial connects to the server at addr. Over TLS the handshake is done here, so that a server
// that does not speak TLS is told at once; a plain connection to a TLS server is told by its
// first reply (a plain client has nothing to learn before it sends a command).
func (d Dialer) Dial(ctx context.Context, addr string) (*Conn, error) {
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d.TLS == nil {
		return newConn(nc, &firstReply{nc: nc, d: d, addr: addr}), nil
	}
	tc, err := d.handshake(ctx, nc, addr)
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	return NewConn(tc), nil
}

func (d Dialer) tlsConfig(addr string) *tls.Config {
	cfg := d.TLS.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	return cfg
}

// handshake runs the TLS handshake on nc. When the server has said nothing after probeAfter, a
// second, plain connection asks it for a beanstalk reply; if it gives one, it does not speak
// TLS and the handshake is abandoned.
func (d Dialer) handshake(ctx context.Context, nc net.Conn, addr string) (*tls.Conn, error) {
	tc := tls.Client(nc, d.tlsConfig(addr))
	done := make(chan error, 1)
	go func() { done <- tc.HandshakeContext(ctx) }()
	probeNow := time.NewTimer(probeAfter)
	defer probeNow.Stop()
	var probed chan bool // nil until the probe starts: a receive from it blocks
	for {
		select {
		case err := <-done:
			if err == nil {
				return tc, nil
			}
			var rh tls.RecordHeaderError
			if errors.As(err, &rh) || (isCut(err) && speaksPlain(ctx, addr)) {
				return nil, d.mismatch(addr, false)
			}
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		case <-probeNow.C:
			probed = make(chan bool, 1)
			go func() { probed <- speaksPlain(ctx, addr) }()
		case plain := <-probed:
			probed = nil
			if plain {
				_ = nc.Close() // ends the handshake
				<-done
				return nil, d.mismatch(addr, false)
			}
		}
	}
}

func (d Dialer) mismatch(addr string, serverTLS bool) *TLSMismatchError {
	advice := d.DropTLS
	if serverTLS {
		advice = d.UseTLS
	}
	return &TLSMismatchError{Addr: addr, ServerTLS: serverTLS, Advice: advice}
}

// isCut tells an error of a connection the server closed or reset.
func isCut(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// isTLSRecord tells the first bytes of a TLS server's answer: a handshake or an alert record
// (content type 22 or 21, major version 3). No beanstalk reply starts with either byte.
func isTLSRecord(b []byte) bool {
	return len(b) > 0 && (b[0] == 0x16 || b[0] == 0x15) && (len(b) < 2 || b[1] == 0x03)
}

// speaksPlain asks the server at addr, on a connection of its own, for a beanstalk reply to a
// command that changes nothing: a line of a capital word (USING, or UNAUTHORIZED with auth on)
// means it speaks plain beanstalk.
func speaksPlain(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer nc.Close()
	deadline, _ := ctx.Deadline()
	_ = nc.SetDeadline(deadline)
	if _, err := io.WriteString(nc, "list-tube-used\r\n"); err != nil {
		return false
	}
	b := make([]byte, 64)
	n, _ := io.ReadAtLeast(nc, b, 1)
	return n > 0 && b[0] >= 'A' && b[0] <= 'Z'
}

// speaksTLS tries a TLS handshake with the server at addr, on a connection of its own and
// without checking its certificate: only whether it answers in TLS matters. A handshake done or
// refused by the server's TLS alert means it does.
func speaksTLS(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // a probe: it sends nothing
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		_ = nc.Close()
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error"
}

// firstReply reads a plain connection and looks at the server's first answer: TLS records, or
// the connection cut without a word by a server that then completes a TLS handshake, mean the
// server speaks TLS. After the first answer it only reads.
type firstReply struct {
	nc      net.Conn
	d       Dialer
	addr    string
	checked bool
	err     error // the mismatch found, returned by every read after
}

func (f *firstReply) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.nc.Read(p)
	if f.checked {
		return n, err
	}
	switch {
	case n > 0:
		f.checked = true
		if isTLSRecord(p[:n]) {
			f.err = f.d.mismatch(f.addr, true)
			return 0, f.err
		}
	case err != nil && isCut(err):
		f.checked = true
		if speaksTLS(context.Background(), f.addr) {
			f.err = f.d.mismatch(f.addr, true)
			return 0, f.err
		}
	}
	return n, err
}
