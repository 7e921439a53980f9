package gatewaytest

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ReplyTimeout bounds every wait for a reply, so a broken server fails a test instead of
// hanging it.
const ReplyTimeout = 5 * time.Second

// quietPeriod is how long ExpectNothing listens.
const quietPeriod = 150 * time.Millisecond

// Client is a raw beanstalk protocol connection for tests: it sends bytes and checks the bytes
// that come back.
type Client struct {
	t    testing.TB
	conn net.Conn
	buf  []byte // received, not yet matched
}

// Dial connects to addr; the connection closes when the test ends.
func Dial(t testing.TB, addr string) *Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, ReplyTimeout)
	require.NoError(t, err)
	return NewClient(t, conn)
}

// NewClient is a Client over conn (a TLS connection, say); conn closes when the test ends.
func NewClient(t testing.TB, conn net.Conn) *Client {
	t.Cleanup(func() { _ = conn.Close() })
	return &Client{t: t, conn: conn}
}

// Send writes s as is.
func (c *Client) Send(s string) {
	c.t.Helper()
	_, err := c.conn.Write([]byte(s))
	require.NoError(c.t, err)
}

// Do sends s and requires the reply to match pattern (see Pattern).
func (c *Client) Do(s, pattern string) string {
	c.t.Helper()
	c.Send(s)
	return c.Expect(pattern)
}

// Expect waits for bytes matching pattern exactly (see Pattern) and returns them.
func (c *Client) Expect(pattern string) string {
	c.t.Helper()
	got, err := c.expect(Pattern(pattern, false))
	require.NoError(c.t, err)
	return got
}

func (c *Client) expect(re *regexp.Regexp) (string, error) {
	deadline := time.Now().Add(ReplyTimeout)
	chunk := make([]byte, 64<<10)
	for {
		if loc := re.FindIndex(c.buf); loc != nil {
			got := string(c.buf[:loc[1]])
			c.buf = c.buf[loc[1]:]
			return got, nil
		}
		_ = c.conn.SetReadDeadline(deadline)
		n, err := c.conn.Read(chunk)
		c.buf = append(c.buf, chunk[:n]...)
		if err != nil {
			return "", fmt.Errorf("waiting for %q: got %q: %w", re.String(), c.buf, err)
		}
	}
}

// ExpectNothing requires that no byte arrives for a short while.
func (c *Client) ExpectNothing() {
	c.t.Helper()
	require.Empty(c.t, c.readQuiet(), "expected no reply")
}

func (c *Client) readQuiet() []byte {
	_ = c.conn.SetReadDeadline(time.Now().Add(quietPeriod))
	chunk := make([]byte, 4096)
	n, _ := c.conn.Read(chunk)
	c.buf = append(c.buf, chunk[:n]...)
	return c.buf
}

// ExpectClosed requires the server to close the connection (after any bytes already matched).
func (c *Client) ExpectClosed() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(ReplyTimeout))
	n, err := c.conn.Read(make([]byte, 1))
	require.Zero(c.t, n, "expected the connection to close")
	require.Error(c.t, err)
	require.False(c.t, os.IsTimeout(err), "the connection stayed open: %v", err)
}

// Close closes the connection; CloseWrite half-closes it.
func (c *Client) Close() { _ = c.conn.Close() }

// CloseWrite shuts down the sending side only.
func (c *Client) CloseWrite() {
	c.t.Helper()
	require.NoError(c.t, c.conn.(*net.TCPConn).CloseWrite())
}

// Pattern compiles an expected reply into an anchored regexp. Everything is literal except:
// {n} matches a decimal number, {*} any run of bytes other than newline. With lenientQuotes
// (beanstalkd 1.12, which leaves YAML strings unquoted) every double quote is optional.
func Pattern(p string, lenientQuotes bool) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`\A(?s:`)
	for len(p) > 0 {
		switch {
		case strings.HasPrefix(p, "{n}"):
			b.WriteString(`\d+`)
			p = p[3:]
		case strings.HasPrefix(p, "{*}"):
			b.WriteString(`[^\n]*`)
			p = p[3:]
		case p[0] == '"' && lenientQuotes:
			b.WriteString(`"?`)
			p = p[1:]
		default:
			b.WriteString(regexp.QuoteMeta(p[:1]))
			p = p[1:]
		}
	}
	b.WriteString(`)`)
	return regexp.MustCompile(b.String())
}
