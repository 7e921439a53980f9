package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/stretchr/testify/require"
)

// loopbackServer listens on a free loopback port and hands each connection to serve, on a
// goroutine of its own; the listener and the connections end with the test.
func loopbackServer(t *testing.T, serve func(net.Conn)) string {
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
			t.Cleanup(func() { _ = c.Close() })
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// A server that accepts connections and never answers: the worst case of a hung database.
func blackhole(t *testing.T) string {
	return loopbackServer(t, func(net.Conn) {})
}

func TestUnresponsiveDatabaseFailsNewWithinTheTimeout(t *testing.T) {
	t.Parallel()
	opts := Options{DSN: "postgres://postgres@" + blackhole(t) + "/test?sslmode=disable", CommandTimeout: 200 * time.Millisecond}
	began := time.Now()
	_, err := New(context.Background(), opts)
	require.Error(t, err)
	require.Less(t, time.Since(began), 2*time.Second)
}

func TestCommandRunningOverTheTimeoutFailsThenTheNextSucceeds(t *testing.T) {
	t.Parallel()
	pool := admin(t)
	schema := testSchema(t)
	ctx := testCtx(t)
	opts := testOptions(schema, nil)
	opts.CommandTimeout = 300 * time.Millisecond
	b, err := New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })

	// Hold the tube row every put of "default" must update.
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT 1 FROM "+schema+".tubes WHERE name = 'default' FOR UPDATE")
	require.NoError(t, err)
	began := time.Now()
	_, err = b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Second, Body: []byte("x")})
	require.Error(t, err)
	require.NotErrorIs(t, err, backend.ErrNotFound)
	require.Less(t, time.Since(began), 2*time.Second, "a blocked command must give up at CommandTimeout")
	require.NoError(t, tx.Rollback(ctx))

	id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Second, Body: []byte("y")})
	require.NoError(t, err)
	job, err := b.Peek(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []byte("y"), job.Body)
}

func TestLostConnectionsGiveErrorsThenRecoverWithNothingAcknowledgedLost(t *testing.T) {
	t.Parallel()
	pool := admin(t)
	schema := testSchema(t)
	ctx := testCtx(t)
	var r [6]byte
	_, _ = rand.Read(r[:])
	app := "beangate_kill_" + hex.EncodeToString(r[:])
	opts := testOptions(schema, nil)
	opts.DSN += "&application_name=" + app
	b, err := New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })

	acked := map[uint64]bool{}
	put := func() error {
		id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")})
		if err == nil {
			acked[id] = true
		}
		return err
	}
	for range 20 {
		require.NoError(t, put())
	}

	var killed int
	require.NoError(t, pool.QueryRow(ctx,
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&killed))
	require.Positive(t, killed, "the backend's connections (pool and listener) were found")

	// Calls right after may fail (their connection is gone), cleanly; soon they succeed again.
	deadline := time.Now().Add(5 * time.Second)
	recovered := 0
	for recovered < 20 {
		if err := put(); err != nil {
			require.NotErrorIs(t, err, backend.ErrNotFound)
			require.True(t, time.Now().Before(deadline), "no recovery: %v", err)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		recovered++
	}
	for id := range acked {
		_, err := b.Peek(ctx, id)
		require.NoError(t, err, "acknowledged job %d lost", id)
	}
	st, err := b.Stats(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, st.ReadyJobs, uint64(len(acked)))

	// The listener reconnected too: a waiting reserve is woken by a put from another Backend.
	other := newTestBackend(t, nil, schema)
	requireWokenAcrossBackends(t, ctx, b, other, "recover.1", "fresh")
}
