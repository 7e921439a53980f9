package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/postgres/pgtest"
)

// opsAddr waits for the ops listener of a server launched with --http.
func (s *runningServer) waitOps(t *testing.T) {
	t.Helper()
	select {
	case <-s.ops:
	case code := <-s.exit:
		t.Fatalf("run exited %d before the ops listener was up; stderr:\n%s", code, s.stderr)
	case <-time.After(10 * time.Second):
		t.Fatal("the ops listener did not come up")
	}
}

// requireLogged waits until stderr holds want.
func (s *runningServer) requireLogged(t *testing.T, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(s.stderr.String(), want) },
		10*time.Second, 20*time.Millisecond, "never logged %q; stderr:\n%s", want, s.stderr)
}

// A gateway started before its store (as Compose or Kubernetes may start them) waits for it,
// not ready and alive, logging each failed attempt, then serves once the store is up: a private
// Redis or PostgreSQL, down at the start and started later on its port.
func TestWaitsForTheStoreToComeUp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		store func(t *testing.T) (url string, down, up func())
	}{
		{"Redis", func(t *testing.T) (string, func(), func()) {
			r := startPrivateRedis(t)
			return r.url() + "?prefix=late&timeout=300ms", r.kill, r.start
		}},
		{"PostgreSQL", func(t *testing.T) (string, func(), func()) {
			c := pgtest.PrivateCluster(t)
			return c.URL() + "&schema=late&command_timeout=300ms", c.Stop, c.Restart
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, down, up := tt.store(t)
			down()
			s := launchServer(t, "-p", "0", "--http", "127.0.0.1:0", "--backend", url)
			s.waitOps(t)
			s.requireLogged(t, "store not reachable yet; trying again")
			s.requireLogged(t, "attempt=2")
			code, body := s.httpGet(t, "/readyz")
			require.Equal(t, http.StatusServiceUnavailable, code)
			require.Equal(t, "starting: opening the store\n", body)
			code, _ = s.httpGet(t, "/healthz")
			require.Equal(t, http.StatusOK, code, "alive while waiting: no liveness restart")
			_, metrics := s.httpGet(t, "/metrics")
			require.Contains(t, metrics, "beangate_ready 0\n", "an alert on beangate_ready sees the wait")
			select {
			case code := <-s.exit:
				t.Fatalf("exited %d while the store was down; stderr:\n%s", code, s.stderr)
			default:
			}

			up()
			select {
			case s.addr = <-s.addrs:
			case code := <-s.exit:
				t.Fatalf("exited %d; stderr:\n%s", code, s.stderr)
			case <-time.After(20 * time.Second):
				t.Fatalf("not serving 20s after the store came up; stderr:\n%s", s.stderr)
			}
			s.requireReadyz(t, http.StatusOK, "ready")
			s.requireLogged(t, "store reached")
			c := dial(t, s.addr)
			inserted := c.roundTrip(t, "put 0 0 60 5\r\nhello\r\n")
			require.Regexp(t, `^INSERTED \d+\r\n$`, inserted)
			id := strings.TrimSpace(strings.TrimPrefix(inserted, "INSERTED "))
			require.Equal(t, "RESERVED "+id+" 5\r\n", c.roundTrip(t, "reserve-with-timeout 0\r\n"))
			require.Equal(t, "hello\r\n", c.roundTrip(t, ""))
		})
	}
}

// SIGTERM or SIGINT while the gateway waits for its store stops it at once, with status 0; so
// does a limit on the wait, with status 1 and the reason.
func TestStopWhileWaitingForTheStore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		scheme  string
		args    []string
		stop    func(s *runningServer)
		want    int
		wantLog string
	}{
		{name: "SIGTERM, Redis", scheme: "redis", stop: func(s *runningServer) { s.signals <- syscall.SIGTERM },
			want: exitOK, wantLog: "stop requested while opening the store"},
		{name: "SIGINT, PostgreSQL", scheme: "postgres", stop: func(s *runningServer) { s.signals <- syscall.SIGINT },
			want: exitOK, wantLog: "stop requested while opening the store"},
		{name: "context end, Redis", scheme: "redis", stop: func(s *runningServer) { s.cancel() },
			want: exitOK, wantLog: "stop requested while opening the store"},
		{name: "store-open-timeout, Redis", scheme: "redis", args: []string{"--store-open-timeout", "1s"},
			want: exitFailure, wantLog: "store not reached within --store-open-timeout 1s"},
		{name: "store-open-timeout, PostgreSQL", scheme: "postgres", args: []string{"--store-open-timeout", "1s"},
			want: exitFailure, wantLog: "store not reached within --store-open-timeout 1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := fmt.Sprintf("redis://127.0.0.1:%d/0", freePort(t))
			if tt.scheme == "postgres" {
				url = fmt.Sprintf("postgres://u:s3cret@127.0.0.1:%d/db?sslmode=disable", freePort(t))
			}
			s := launchServer(t, append([]string{"-p", "0", "--http", "127.0.0.1:0", "--backend", url}, tt.args...)...)
			s.waitOps(t)
			s.requireLogged(t, "store not reachable yet; trying again")
			began := time.Now()
			if tt.stop != nil {
				tt.stop(s)
			}
			require.Equal(t, tt.want, s.waitExit(t, 5*time.Second))
			require.Less(t, time.Since(began), 3*time.Second, "promptly")
			require.Contains(t, s.stderr.String(), tt.wantLog)
			require.NotContains(t, s.stderr.String(), "s3cret", "no password in the log")
			require.NotContains(t, s.stderr.String(), "listening")
		})
	}
}

// What trying again cannot fix ends the start at once, as before: a wrong password, an unknown
// role (a bad URL: TestStoreURLMistakeIsBadConfiguration).
func TestFailsAtOnceWhenTryingAgainCannotHelp(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"Redis, wrong password", func(t *testing.T) string {
			r := startPrivateRedis(t, "--requirepass", "right-one")
			return fmt.Sprintf("redis://:s3cret@127.0.0.1:%d/0", r.port)
		}},
		{"Redis, no password", func(t *testing.T) string {
			r := startPrivateRedis(t, "--requirepass", "right-one")
			return r.url()
		}},
		{"PostgreSQL, unknown role", func(t *testing.T) string {
			url, _ := postgresStore(t)
			return strings.Replace(url, "postgres://postgres@", "postgres://no_such_role:s3cret@", 1)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := tt.url(t)
			began := time.Now()
			exit, _, stderr := runArgs(t, "-p", "0", "--backend", url)
			require.Equal(t, exitFailure, exit, stderr)
			require.Less(t, time.Since(began), 5*time.Second)
			require.Contains(t, stderr, "cannot open backend")
			require.NotContains(t, stderr, "trying again")
			require.NotContains(t, stderr, "s3cret")
		})
	}
}

// A store URL that can never work — a mistyped or unknown parameter, a value that does not
// parse, a name the store refuses, anything after memory:// — is bad configuration: exit 5,
// which a systemd unit does not restart on, at once, naming the cause without the password.
// The PostgreSQL parameters pgx does not know reach the server, which refuses them.
func TestStoreURLMistakeIsBadConfiguration(t *testing.T) {
	t.Parallel()
	redisURL, _ := redisStore(t)
	pgURL, _ := postgresStore(t)
	pgURL = strings.Replace(pgURL, "postgres://postgres@", "postgres://postgres:s3cret@", 1)
	// first puts a parameter ahead of the store helper's own, which would win otherwise.
	first := func(url, param string) string {
		base, query, _ := strings.Cut(url, "?")
		return base + "?" + param + "&" + query
	}
	for _, tt := range []struct {
		name, url, wantErr string
	}{
		{"Redis, misspelt prefix", first(redisURL, "prefx=a"), "unexpected option: prefx"},
		{"Redis, lease not a duration", first(redisURL, "lease=abc"), `lease="abc" is not a positive duration`},
		{"Redis, timeout not a duration", first(redisURL, "timeout=soon"), `timeout="soon" is not a positive duration`},
		{"Redis, PostgreSQL's command_timeout", first(redisURL, "command_timeout=abc"), "unexpected option: command_timeout"},
		{"Redis, prefix with a brace", first(redisURL, "prefix=a{b"), `prefix "a{b" may not contain '{' or '}'`},
		{"Redis, DB not a number", "redis://127.0.0.1:6379/abc", "invalid database number"},
		{"PostgreSQL, misspelt parameter", first(pgURL, "prefx=a"), `unrecognized configuration parameter "prefx"`},
		{"PostgreSQL, Redis's prefix", first(pgURL, "prefix=a{b"), `unrecognized configuration parameter "prefix"`},
		{"PostgreSQL, lease not a duration", first(pgURL, "lease_ttl=abc"), `lease_ttl: time: invalid duration "abc"`},
		{"PostgreSQL, command_timeout not a duration", first(pgURL, "command_timeout=abc"), `command_timeout: time: invalid duration "abc"`},
		{"PostgreSQL, bad schema name", first(pgURL, "schema=a-b"), `schema name "a-b"`},
		{"PostgreSQL, bad port", "postgres://postgres:s3cret@127.0.0.1:99999/test", "invalid port"},
		{"PostgreSQL, bad sslmode", "postgres://postgres:s3cret@127.0.0.1:5432/test?sslmode=bogus", "sslmode is invalid"},
		{"memory, host", "memory://foo", `memory:// takes no host (got "foo")`},
		{"memory, parameters", "memory://?binlog=/tmp", `memory:// takes no parameters (got "binlog=/tmp")`},
		{"memory, path", "memory:///var/lib", `memory:// takes no path (got "/var/lib")`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			exit, _, stderr := runArgs(t, "-p", "0", "--backend", tt.url)
			require.Equal(t, exitUsage, exit, stderr)
			require.Less(t, time.Since(began), 5*time.Second)
			require.Contains(t, stderr, "cannot open backend")
			require.Contains(t, strings.ReplaceAll(stderr, `\"`, `"`), tt.wantErr) // logfmt quotes the error
			require.NotContains(t, stderr, "trying again")
			require.NotContains(t, stderr, "s3cret")
		})
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("redis: ping: %w", refused), true},
		{"name not in DNS yet", &net.DNSError{Err: "no such host", Name: "redis", IsNotFound: true}, true},
		{"a call timed out", fmt.Errorf("postgres: migration lock: %w", context.DeadlineExceeded), true},
		{"PostgreSQL starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"PostgreSQL out of connections", &pgconn.PgError{Code: "53300"}, true},
		{"PostgreSQL wrong password", fmt.Errorf("postgres: %w", &pgconn.PgError{Code: "28P01"}), false},
		{"PostgreSQL permission denied", &pgconn.PgError{Code: "42501"}, false},
		{"anything else", errors.New("postgres: schema \"x\" was never migrated"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, retryable(tt.err))
		})
	}
}
