package ops_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/gateway/ops"
)

func loadTokens(t *testing.T, content string) (*ops.Tokens, string) {
	t.Helper()
	path := writeFile(t, t.TempDir(), "tokens", []byte(content))
	tokens, err := ops.LoadTokens(path)
	require.NoError(t, err)
	return tokens, path
}

// Token auth, byte for byte: "auth <token>" first; before it only auth and quit.
func TestAuthExactBytes(t *testing.T) {
	t.Parallel()
	tokens, _ := loadTokens(t, "# rotation: both accepted\ns3cret-one\n\ns3cret-two\n")
	s := startOpsServer(t, 100, gateway.Config{Auth: tokens.Check, HandshakeTimeout: 300 * time.Millisecond})
	tests := []struct {
		name   string
		send   string
		reply  string
		closed bool
	}{
		{"RightToken", "auth s3cret-one\r\n", "AUTHENTICATED\r\n", false},
		{"SecondToken", "auth s3cret-two\r\n", "AUTHENTICATED\r\n", false},
		{"WrongToken", "auth s3cret-on\r\n", "UNAUTHORIZED\r\n", true},
		{"TokenWithTrailingSpace", "auth s3cret-one \r\n", "UNAUTHORIZED\r\n", true},
		{"EmptyToken", "auth \r\n", "UNAUTHORIZED\r\n", true},
		{"CommandBeforeAuth", "list-tube-used\r\n", "UNAUTHORIZED\r\n", true},
		{"PutBeforeAuth", "put 0 0 60 1\r\nx\r\n", "UNAUTHORIZED\r\n", true},
		{"UnknownBeforeAuth", "frobnicate\r\n", "UNAUTHORIZED\r\n", true},
		{"QuitBeforeAuth", "quit\r\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := gatewaytest.Dial(t, s.addr)
			c.Send(tt.send)
			if tt.reply != "" {
				c.Expect(tt.reply)
			}
			if tt.closed {
				c.ExpectClosed()
				return
			}
			c.Do("list-tube-used\r\n", "USING default\r\n")
			c.Do("put 0 0 60 2\r\nhi\r\n", "INSERTED {n}\r\n")
			time.Sleep(400 * time.Millisecond) // past the handshake timeout: authenticated, so no matter
			c.Do("list-tube-used\r\n", "USING default\r\n")
		})
	}
}

// A connection that does not authenticate within the handshake timeout is told so and closed.
func TestAuthTimeout(t *testing.T) {
	t.Parallel()
	tokens, _ := loadTokens(t, "tok\n")
	s := startOpsServer(t, 100, gateway.Config{Auth: tokens.Check, HandshakeTimeout: 300 * time.Millisecond})
	c := gatewaytest.Dial(t, s.addr)
	began := time.Now()
	c.Expect("UNAUTHORIZED\r\n")
	c.ExpectClosed()
	require.GreaterOrEqual(t, time.Since(began), 250*time.Millisecond)
	m := scrape(t, s.http)
	require.Equal(t, 1.0, value(m, "beangate_connections_rejected_total", labels{"reason": "auth_timeout"}))
}

// A reload replaces the accepted tokens: the old one stops working, the new one works; a
// file that fails to load leaves the tokens as they were.
func TestTokenReload(t *testing.T) {
	t.Parallel()
	tokens, path := loadTokens(t, "old-token\n")
	require.True(t, tokens.Check([]byte("old-token")))
	writeFile(t, strings.TrimSuffix(path, "/tokens"), "tokens", []byte("new-token\n"))
	require.NoError(t, tokens.Reload())
	require.False(t, tokens.Check([]byte("old-token")))
	require.True(t, tokens.Check([]byte("new-token")))

	writeFile(t, strings.TrimSuffix(path, "/tokens"), "tokens", []byte("# nothing\n"))
	require.ErrorContains(t, tokens.Reload(), "no token in it")
	require.True(t, tokens.Check([]byte("new-token")), "a bad file keeps the tokens in use")
}

// A bad token file is refused, and its error never quotes a token.
func TestTokenFileErrorsHideTokens(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "tokens", []byte("good\n"+strings.Repeat("s", 201)+"\n"))
	_, err := ops.LoadTokens(path)
	require.ErrorContains(t, err, "line 2")
	require.NotContains(t, err.Error(), "sss")
	require.NotContains(t, err.Error(), "good")
}

// -V logs every command line, but never an auth token.
func TestTraceDoesNotLogTokens(t *testing.T) {
	t.Parallel()
	tokens, _ := loadTokens(t, "hunter2\n")
	var log gatewaytest.SyncBuffer
	s := startOpsServer(t, 100, gateway.Config{Auth: tokens.Check, Logger: debugLogger(&log)})
	c := gatewaytest.Dial(t, s.addr)
	c.Do("auth hunter2\r\n", "AUTHENTICATED\r\n")
	c.Do("list-tube-used\r\n", "USING default\r\n")
	require.Contains(t, log.String(), "list-tube-used")
	require.Contains(t, log.String(), "auth <token not logged>")
	require.False(t, bytes.Contains([]byte(log.String()), []byte("hunter2")))
}
