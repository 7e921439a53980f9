package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/postgres/pgtest"
)

// httpGet returns the status and body of the ops listener's path.
func (s *runningServer) httpGet(t *testing.T, path string) (int, string) {
	t.Helper()
	require.NotNil(t, s.opsAddr, "started without --http")
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + s.opsAddr.String() + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// requireReadyz waits until /readyz answers code with a body starting with reason.
func (s *runningServer) requireReadyz(t *testing.T, code int, reason string) {
	t.Helper()
	var (
		gotCode int
		gotBody string
	)
	require.Eventually(t, func() bool {
		gotCode, gotBody = s.httpGet(t, "/readyz")
		return gotCode == code && strings.HasPrefix(gotBody, reason)
	}, 10*time.Second, 20*time.Millisecond, "want /readyz %d %q", code, reason)
	_ = gotBody
}

func TestOpsListenerServesHealthAndMetrics(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0")
	code, body := s.httpGet(t, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)
	s.requireReadyz(t, http.StatusOK, "ready")
	require.Equal(t, "INSERTED 1\r\n", dial(t, s.addr).roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
	code, body = s.httpGet(t, "/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		`beangate_commands_total{command="put",result="ok"} 1`,
		`beangate_store_jobs{state="ready"} 1`,
		"go_goroutines ", "process_resident_memory_bytes ", "beangate_ready 1",
		`beangate_build_info{backend="memory",goversion="` + runtime.Version() + `",revision=`,
		`beangate_commands_total{command="reserve",result="ok"} 0`, // at 0 before its first use
	} {
		require.Contains(t, body, want)
	}
}

// With -b, /metrics carries the binlog's figures (wired by the command, not only by the tests of
// gateway/ops); without it, none.
func TestMetricsOfTheBinlog(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0", "-b", t.TempDir(), "-f0")
	require.Equal(t, "INSERTED 1\r\n", dial(t, s.addr).roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
	_, body := s.httpGet(t, "/metrics")
	for _, want := range []string{
		"beangate_binlog_records_written_total 1\n", `beangate_binlog_errors_total{op="write"} 0`,
		"beangate_binlog_fsync_duration_seconds_count ", "beangate_binlog_files ",
	} {
		require.Contains(t, body, want)
	}
	plain := startServer(t, "-p", "0", "--http", "127.0.0.1:0")
	_, body = plain.httpGet(t, "/metrics")
	require.NotContains(t, body, "beangate_binlog_")
}

// /readyz: ready once serving; 503 for good after SIGUSR1 (drain), while /healthz stays 200.
func TestReadyzDrain(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0")
	s.requireReadyz(t, http.StatusOK, "ready")
	s.signals <- syscall.SIGUSR1
	s.requireReadyz(t, http.StatusServiceUnavailable, "draining")
	code, _ := s.httpGet(t, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "DRAINING\r\n", dial(t, s.addr).roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
}

// The rolling-restart sequence: SIGTERM turns /readyz 503 at once; for --shutdown-delay the
// gateway still serves its clients and still accepts; then it stops gracefully.
func TestSIGTERMWaitsTheShutdownDelayWhileServing(t *testing.T) {
	t.Parallel()
	const delay = 800 * time.Millisecond
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0", "--shutdown-delay", delay.String())
	s.requireReadyz(t, http.StatusOK, "ready")
	c := dial(t, s.addr)
	require.Equal(t, "INSERTED 1\r\n", c.roundTrip(t, "put 0 0 10 1\r\nx\r\n"))

	began := time.Now()
	s.signals <- syscall.SIGTERM
	s.requireReadyz(t, http.StatusServiceUnavailable, "shutting down")
	require.Less(t, time.Since(began), delay/2, "not ready at once")
	require.Equal(t, "RESERVED 1 1\r\n", c.roundTrip(t, "reserve-with-timeout 0\r\n"), "the client is still served")
	require.Equal(t, "x\r\n", c.roundTrip(t, ""))
	require.Equal(t, "DELETED\r\n", c.roundTrip(t, "delete 1\r\n"))
	require.Equal(t, "USING default\r\n", dial(t, s.addr).roundTrip(t, "list-tube-used\r\n"), "still accepting")
	select {
	case code := <-s.exit:
		t.Fatalf("exited %d before the shutdown delay", code)
	default:
	}

	require.Equal(t, exitOK, s.waitExit(t, delay+5*time.Second))
	require.GreaterOrEqual(t, time.Since(began), delay)
	require.Contains(t, s.stderr.String(), "still serving until the shutdown delay has passed")
}

// A second SIGTERM during the shutdown delay stops at once.
func TestSecondSIGTERMCutsTheShutdownDelay(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "--shutdown-delay", "1m")
	dial(t, s.addr).roundTrip(t, "list-tube-used\r\n")
	s.signals <- syscall.SIGTERM
	s.signals <- syscall.SIGTERM
	require.Equal(t, exitOK, s.waitExit(t, 5*time.Second))
}

// /readyz follows the store: 503 once a store it cannot reach (a private Redis killed, a private
// PostgreSQL stopped) has been down for --store-down-after, and ready again when it is back.
func TestReadyzFollowsTheStore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		start func(t *testing.T) (backendURL string, stop, restart func())
	}{
		{"Redis", func(t *testing.T) (string, func(), func()) {
			r := startPrivateRedis(t)
			return r.url() + "?prefix=readyz&timeout=300ms", r.kill, r.start
		}},
		{"PostgreSQL", func(t *testing.T) (string, func(), func()) {
			c := pgtest.PrivateCluster(t)
			return c.URL() + "&schema=readyz&command_timeout=300ms&lease_ttl=1s", c.Stop, c.Restart
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, stop, restart := tt.start(t)
			s := startServer(t, "-p", "0", "--http", "127.0.0.1:0", "--store-down-after", "500ms", "--backend", url)
			s.requireReadyz(t, http.StatusOK, "ready")

			stop()
			s.requireReadyz(t, http.StatusServiceUnavailable, "store unreachable")
			_, metrics := s.httpGet(t, "/metrics")
			require.Contains(t, metrics, "beangate_store_up 0")
			require.Contains(t, metrics, "beangate_ready 0")

			restart()
			s.requireReadyz(t, http.StatusOK, "ready")
			c := dial(t, s.addr)
			require.Regexp(t, `^INSERTED \d+\r\n$`, c.roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
		})
	}
}

// SIGHUP re-reads the token file: the new token works, the old one no longer does, and
// connections already authenticated stay.
func TestSIGHUPReloadsTheTokenFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(file, []byte("first-token\n"), 0o600))
	s := startServer(t, "-p", "0", "--auth-token-file", file)
	old := dial(t, s.addr)
	require.Equal(t, "AUTHENTICATED\r\n", old.roundTrip(t, "auth first-token\r\n"))

	require.NoError(t, os.WriteFile(file, []byte("second-token\n"), 0o600))
	s.signals <- syscall.SIGHUP
	require.Eventually(t, func() bool {
		return strings.Contains(s.stderr.String(), "SIGHUP: auth tokens reloaded")
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "UNAUTHORIZED\r\n", dial(t, s.addr).roundTrip(t, "auth first-token\r\n"))
	require.Equal(t, "AUTHENTICATED\r\n", dial(t, s.addr).roundTrip(t, "auth second-token\r\n"))
	require.Equal(t, "USING default\r\n", old.roundTrip(t, "list-tube-used\r\n"))
	require.NotContains(t, s.stderr.String(), "first-token", "tokens are never logged")
	require.NotContains(t, s.stderr.String(), "second-token", "tokens are never logged")
}

func TestFleetFilesMustLoad(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	exit, _, stderr := runArgs(t, "-p", "0", "--auth-token-file", missing)
	require.Equal(t, exitUsage, exit)
	require.Contains(t, stderr, "auth token file")
	exit, _, stderr = runArgs(t, "-p", "0", "--tls-cert", missing)
	require.Equal(t, exitUsage, exit)
	require.Contains(t, stderr, "tls.cert and tls.key: give both or neither")
}

// privateRedis is a redis-server of the test's own, stopped and restarted on its port.
type privateRedis struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
	args []string // more redis-server arguments
}

// startPrivateRedis starts one with args added to redis-server's (a password, say).
func startPrivateRedis(t *testing.T, args ...string) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		requireStore(t, "redis-server", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	r := &privateRedis{t: t, port: port, args: args}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *privateRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *privateRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir()}, r.args...)...)
	require.NoError(r.t, r.cmd.Start())
	c := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer c.Close()
	require.Eventually(r.t, func() bool {
		err := c.Ping(context.Background()).Err()
		return err == nil || goredis.IsAuthError(err) // up, asking for a password
	}, 10*time.Second, 20*time.Millisecond, "private redis-server did not start")
}

func (r *privateRedis) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}
