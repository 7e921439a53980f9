package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

const defaultTestURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

func testURL() string {
	if u := os.Getenv("PG_URL"); u != "" {
		return u
	}
	return defaultTestURL
}

var (
	adminOnce sync.Once
	adminPool *pgxpool.Pool
	adminErr  error
)

// admin returns a shared pool for schema set-up and tear-down. Without Postgres the test fails in
// CI (CI=true) and is skipped elsewhere.
func admin(t testing.TB) *pgxpool.Pool {
	t.Helper()
	adminOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		adminPool, adminErr = pgxpool.New(ctx, testURL())
		if adminErr == nil {
			adminErr = adminPool.Ping(ctx)
		}
	})
	if adminErr != nil {
		backendtest.Unavailable(t, "PostgreSQL unreachable at %s (set PG_URL): %v", testURL(), adminErr)
	}
	return adminPool
}

// testSchema returns a fresh schema name, dropped when the test ends.
func testSchema(t testing.TB) string {
	t.Helper()
	pool := admin(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return schema
}

// testOptions are the options of a test backend in schema: short lease, short timeouts.
func testOptions(schema string, clock backend.Clock) Options {
	return Options{DSN: testURL(), Schema: schema, Clock: clock, LeaseTTL: 1500 * time.Millisecond, VacuumInterval: -1,
		CommandTimeout: 3 * time.Second}
}

// newTestBackend opens a Backend in its own schema (or the given one), closed at cleanup.
func newTestBackend(t testing.TB, clock backend.Clock, schema ...string) *Backend {
	t.Helper()
	var s string
	if len(schema) > 0 {
		s = schema[0]
	} else {
		s = testSchema(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, testOptions(s, clock))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// requireWokenAcrossBackends checks that a reserve waiting on waiting (as a new session sid) is
// woken by a put into tube on other: the listener of waiting works. The waiting backend's
// re-poll is switched off (an hour), so a reserve gets the job only through a wake-up; a
// listener still reconnecting (back-off, at most 2 s) gets further tries, each on a fresh tube,
// until a deadline.
func requireWokenAcrossBackends(t *testing.T, ctx context.Context, waiting, other *Backend, sid backend.SessionID, tube string) {
	t.Helper()
	waiting.poll = time.Hour
	require.NoError(t, waiting.BeginSession(ctx, sid, backend.SessionInfo{}))
	deadline := time.Now().Add(10 * time.Second)
	for try := 0; ; try++ {
		name := fmt.Sprintf("%s-%d", tube, try)
		// Given up by its context, not by a reserve timeout: a timed-out reserve makes a last
		// attempt, which would find the job without any wake-up.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := waiting.Reserve(rctx, backend.ReserveParams{Session: sid, Tubes: []string{name}, Timeout: -1})
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		_, err := other.Put(ctx, backend.PutParams{Tube: name, TTR: time.Minute, Body: []byte("z")})
		require.NoError(t, err)
		err = <-done
		cancel()
		if err == nil {
			return
		}
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.True(t, time.Now().Before(deadline), "waiting reserve never woken by a put on another backend")
	}
}

// reserved is the outcome of a reserve started by startWaitingReserve.
type reserved struct {
	job *backend.Job
	err error
}

// startWaitingReserve starts b.Reserve(p) and returns once a reserve waits, idle, on tube (a put
// into tube may claim it); the outcome comes on the channel.
func startWaitingReserve(t *testing.T, ctx context.Context, b *Backend, p backend.ReserveParams, tube string) <-chan reserved {
	t.Helper()
	got := make(chan reserved, 1)
	go func() {
		j, err := b.Reserve(ctx, p)
		got <- reserved{j, err}
	}()
	require.Eventually(t, func() bool { return b.waiters.waiting(tube) }, 5*time.Second, time.Millisecond)
	return got
}
