package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The config's policies: are set at start; their actions are counted and logged at debug level;
// with -b they outlive a restart started without them.
func TestConfigPoliciesAreSetCountedAndKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(t.TempDir(), "beangate.yaml")
	require.NoError(t, os.WriteFile(config, []byte(`
policies:
  - tube: "work-*"
    unique: true
    max_reserves: 1
  - tube: "retry-*"
    retry_delay: 1s
    retry_delay_max: 1m
`), 0o600))
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0", "-b", dir, "--config", config, "-V")
	c := dial(t, s.addr)
	require.Equal(t, "USING work-a\r\n", c.roundTrip(t, "use work-a\r\n"))
	require.Equal(t, "INSERTED 1\r\n", c.roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
	require.Equal(t, "INSERTED 1\r\n", c.roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
	require.Equal(t, "WATCHING 2\r\n", c.roundTrip(t, "watch work-a\r\n"))
	require.Equal(t, "RESERVED 1 1\r\n", c.roundTrip(t, "reserve-with-timeout 0\r\n"))
	_, _ = c.r.ReadString('\n') // the body
	require.Equal(t, "BURIED\r\n", c.roundTrip(t, "release 1 0 0\r\n"))

	// A job of a retry-* tube released without a delay comes back delayed by its backoff.
	r := dial(t, s.addr)
	require.Equal(t, "USING retry-a\r\n", r.roundTrip(t, "use retry-a\r\n"))
	require.Equal(t, "INSERTED 2\r\n", r.roundTrip(t, "put 0 0 10 1\r\ny\r\n"))
	require.Equal(t, "RESERVED 2 1\r\n", r.roundTrip(t, "reserve-job 2\r\n"))
	_, _ = r.r.ReadString('\n') // the body
	require.Equal(t, "RELEASED\r\n", r.roundTrip(t, "release 2 0 0\r\n"))
	var n int
	_, err := fmt.Sscanf(r.roundTrip(t, "stats-job 2\r\n"), "OK %d\r\n", &n)
	require.NoError(t, err)
	body := make([]byte, n+2)
	_, err = io.ReadFull(r.r, body)
	require.NoError(t, err)
	stats := string(body)
	require.Contains(t, stats, "state: delayed\n")
	require.Contains(t, stats, "delay: 1\n")

	_, metrics := s.httpGet(t, "/metrics")
	require.Contains(t, metrics, `beangate_policy_actions_total{action="dedupe",policy="unique",tube="work-a"} 1`)
	require.Contains(t, metrics, `beangate_policy_actions_total{action="bury",policy="max-reserves",tube="work-a"} 1`)
	require.Contains(t, metrics, `beangate_policy_actions_total{action="delay",policy="retry-delay",tube="retry-a"} 1`)
	require.Contains(t, s.stderr.String(), "tube policy acted")
	s.cancel()
	s.waitExit(t, 10*time.Second)

	again := startServer(t, "-p", "0", "--http", "127.0.0.1:0", "-b", dir)
	_, policies := again.httpGet(t, "/api/policies")
	require.JSONEq(t, `{"policies":[{"tube":"retry-*","retry_delay":1,"retry_delay_max":60},{"tube":"work-*","max_reserves":1,"unique":true}]}`, policies)
}
