package redis_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// privateRedis is a redis-server of the test's own on a free port, so that killing it disturbs
// nobody else.
type privateRedis struct {
	t    *testing.T
	port int
	dir  string
	aof  bool
	cmd  *exec.Cmd
}

// startPrivateRedis starts one with AOF, fsync always: a kill loses nothing acknowledged.
func startPrivateRedis(t *testing.T) *privateRedis { return startRedisServer(t, true) }

// startVolatileRedis starts one without persistence (no AOF, no snapshot): restart forgets
// every key, as a Redis restarted without AOF, or a failover to a replica that had not yet
// received them, forgets the last writes.
func startVolatileRedis(t *testing.T) *privateRedis { return startRedisServer(t, false) }

func startRedisServer(t *testing.T, aof bool) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		backendtest.Unavailable(t, "redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	r := &privateRedis{t: t, port: port, dir: t.TempDir(), aof: aof}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *privateRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// client is a plain go-redis client of the server, for the test to inspect or disturb it.
func (r *privateRedis) client() *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
}

// newBackend opens a Backend on the server under prefix, closed when the test ends.
func (r *privateRedis) newBackend(prefix string, timeout time.Duration) *beanredis.Backend {
	r.t.Helper()
	b, err := beanredis.New(context.Background(), beanredis.Options{URL: r.url(), Prefix: prefix, CommandTimeout: timeout})
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = b.Close() })
	return b
}

func (r *privateRedis) start() {
	r.t.Helper()
	appendonly := "no"
	if r.aof {
		appendonly = "yes"
	}
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--dir", r.dir, "--appendonly", appendonly, "--appendfsync", "always", "--save", "",
		"--maxmemory-policy", "noeviction")
	require.NoError(r.t, r.cmd.Start())
	c := r.client()
	defer c.Close()
	require.Eventually(r.t, func() bool {
		return c.Ping(context.Background()).Err() == nil
	}, 10*time.Second, 20*time.Millisecond, "private redis-server did not start")
}

// restart is a crash and a start: only what the AOF kept, if it has one, is back.
func (r *privateRedis) restart() {
	r.kill()
	r.start()
}

// kill is a crash: SIGKILL, no shutdown save; only the AOF survives.
func (r *privateRedis) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

func TestRedisRestartLosesNoAcknowledgedJob(t *testing.T) {
	t.Parallel()
	srv := startPrivateRedis(t)
	const timeout = 500 * time.Millisecond
	b := srv.newBackend("restart", timeout)
	ctx := context.Background()
	put := func() (uint64, error) {
		return b.Put(ctx, backend.PutParams{Tube: "default", Priority: 1, TTR: time.Minute, Body: []byte("keep me")})
	}

	var acked []uint64
	for range 20 {
		id, err := put()
		require.NoError(t, err)
		acked = append(acked, id)
	}

	srv.kill()
	began := time.Now()
	_, err := put()
	require.Error(t, err, "a put with Redis down must fail")
	require.Less(t, time.Since(began), 3*timeout, "a failing call must not hang")
	_, err = b.Stats(ctx)
	require.Error(t, err)

	srv.start()
	require.Eventually(t, func() bool {
		id, err := put()
		if err == nil {
			acked = append(acked, id)
		}
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "the backend did not reconnect")

	for _, id := range acked {
		j, err := b.Peek(ctx, id)
		require.NoError(t, err, "acknowledged job %d lost", id)
		require.Equal(t, "keep me", string(j.Body))
	}
	st, err := b.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(len(acked)), st.ReadyJobs)
	s := backend.SessionID("restart.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	j, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
	require.NoError(t, err)
	require.Equal(t, acked[0], j.ID)
}

func TestSlowRedisFailsWithinCommandTimeout(t *testing.T) {
	t.Parallel()
	srv := startPrivateRedis(t)
	const timeout = 300 * time.Millisecond
	b := srv.newBackend("slow", timeout)

	admin := srv.client()
	defer admin.Close()
	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", 2000, "ALL").Err())

	began := time.Now()
	_, err := b.Put(context.Background(), backend.PutParams{Tube: "default", TTR: time.Second, Body: []byte("x")})
	require.Error(t, err)
	require.Less(t, time.Since(began), 4*timeout, "the call must give up at about CommandTimeout")
}

// Over the wire: while Redis is down or stalled, each command answers INTERNAL_ERROR within
// about the configured timeout and the connection stays open; when Redis is back, the same
// connection works again (the backend reconnects by itself) and every job acknowledged with
// INSERTED, before or after, is there.
func TestRedisFailureAnswersInternalErrorOnAnOpenConnection(t *testing.T) {
	t.Parallel()
	for _, tt := range redisOutages(1500 * time.Millisecond) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startPrivateRedis(t)
			const timeout = 300 * time.Millisecond
			b := srv.newBackend("wire", timeout)
			addr, _ := gatewaytest.StartServer(t, b, gateway.Config{BackendTimeout: timeout})
			c := gatewaytest.Dial(t, addr)
			var acked []string
			put := func() string {
				reply := c.Do("put 0 0 60 7\r\nkeep me\r\n", "{*}\r\n")
				if strings.HasPrefix(reply, "INSERTED ") {
					acked = append(acked, strings.TrimSpace(reply[len("INSERTED "):]))
				}
				return reply
			}
			for range 5 {
				require.Regexp(t, `^INSERTED \d+\r\n$`, put())
			}

			restore := tt.disturb(t, srv)
			for _, cmd := range []func() string{
				put,
				func() string { return c.Do("peek "+acked[0]+"\r\n", "{*}\r\n") },
				func() string { return c.Do("stats-tube default\r\n", "{*}\r\n") },
			} {
				began := time.Now()
				require.Equal(t, "INTERNAL_ERROR\r\n", cmd())
				require.Less(t, time.Since(began), 4*timeout, "a failing command must answer at about the timeout")
			}

			restore()
			require.Eventually(t, func() bool { return strings.HasPrefix(put(), "INSERTED ") },
				10*time.Second, 50*time.Millisecond, "the same connection never worked again")
			for _, id := range acked {
				c.Do("peek "+id+"\r\n", "FOUND "+id+" 7\r\nkeep me\r\n")
			}
			c.Do("reserve-with-timeout 0\r\n", "RESERVED "+acked[0]+" 7\r\nkeep me\r\n")
		})
	}
}

// redisOutage is one way for Redis to become unavailable to its clients.
type redisOutage struct {
	name string
	// disturb makes Redis fail; the returned func ends that.
	disturb func(t *testing.T, srv *privateRedis) (restore func())
}

// redisOutages are the outages the failure tests go through: the server killed (connections
// refused until it is started again) and the server stalled for pause (connections open, no
// replies; the pause ends by itself).
func redisOutages(pause time.Duration) []redisOutage {
	return []redisOutage{
		{"Redis killed and restarted", func(t *testing.T, srv *privateRedis) func() {
			srv.kill()
			return srv.start
		}},
		{"Redis stalled", func(t *testing.T, srv *privateRedis) func() {
			admin := srv.client()
			defer admin.Close()
			require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", pause.Milliseconds(), "ALL").Err())
			return func() {}
		}},
	}
}
