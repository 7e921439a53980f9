package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The command opens each store from its URL, given as a flag, in the environment or in the
// config file, and serves the protocol over it (the job's time ready measured); migrate-db prepares a Postgres schema for
// gateways started with ?migrate=false. The stores are the real ones (CI=true: an unreachable
// one fails the test).
// Not parallel itself: one case sets the environment (the others run in parallel after it).
func TestServesEveryStoreBackend(t *testing.T) {
	tests := []struct {
		name string
		// store returns a backend URL on a namespace of the test's own (removed after the
		// test) and, for a shared store, how many jobs the store itself holds there.
		store func(t *testing.T) (url string, jobs func() int)
		how   string // "flag", "env" or "file"
		// before runs ahead of the server with the URL, e.g. migrate-db.
		before func(t *testing.T, url string)
	}{
		{name: "memory", store: func(*testing.T) (string, func() int) { return "memory://", nil }, how: "flag"},
		{name: "redis", store: redisStore, how: "flag"},
		{name: "redis from the config file", store: redisStore, how: "file"},
		{name: "postgres", store: postgresStore, how: "flag"},
		{name: "postgres from the environment", store: postgresStore, how: "env"},
		{name: "postgres migrated by migrate-db", how: "flag",
			store: func(t *testing.T) (string, func() int) {
				url, jobs := postgresStore(t)
				return url + "&migrate=false", jobs
			},
			before: func(t *testing.T, url string) {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), []string{"migrate-db", "--backend", url}, &stdout, &stderr)
				require.Equal(t, exitOK, code, "stderr: %s", stderr.String())
				require.Contains(t, stderr.String(), "schema up to date")
				require.Contains(t, stderr.String(), "migration applied", "each migration is logged")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, jobs := tt.store(t)
			if tt.before != nil {
				tt.before(t, url)
			}
			args := []string{"-l", "127.0.0.1", "-p", "0", "--http", "127.0.0.1:0"}
			switch tt.how {
			case "flag":
				args = append(args, "--backend", url)
			case "env":
				t.Setenv("BEANGATE_BACKEND", url) // not parallel: it sets the environment
			case "file":
				file := filepath.Join(t.TempDir(), "beangate.yaml")
				require.NoError(t, os.WriteFile(file, []byte("backend: "+url+"\n"), 0o600))
				args = append(args, "--config", file)
			}
			if tt.how != "env" {
				t.Parallel()
			}
			s := startServer(t, args...)
			c := dial(t, s.addr)
			inserted := c.roundTrip(t, "put 0 0 60 5\r\nhello\r\n")
			require.Regexp(t, `^INSERTED \d+\r\n$`, inserted)
			id := strings.TrimSpace(strings.TrimPrefix(inserted, "INSERTED "))
			if jobs != nil {
				require.Equal(t, 1, jobs(), "the job is not in the store the URL names")
			}
			// Every store tells how long the next job has been ready, for the queue-latency gauge.
			_, metrics := s.httpGet(t, "/metrics")
			require.Regexp(t, `\nbeangate_store_tube_ready_age_seconds\{tube="default"\} \d`, metrics)
			require.Equal(t, "RESERVED "+id+" 5\r\n", c.roundTrip(t, "reserve-with-timeout 0\r\n"))
			require.Equal(t, "hello\r\n", c.roundTrip(t, ""))
			require.Equal(t, "DELETED\r\n", c.roundTrip(t, "delete "+id+"\r\n"))
			// Every store tells how long the job waited ready, for the queueing-time histogram.
			_, metrics = s.httpGet(t, "/metrics")
			require.Contains(t, metrics, `beangate_job_ready_wait_seconds_count{tube="default"} 1`+"\n")
			require.Contains(t, metrics, `beangate_store_tube_ready_age_seconds{tube="default"} 0`+"\n")
			if jobs != nil {
				require.Zero(t, jobs())
			}
		})
	}
}

// randomName is a fresh name for a test's own namespace.
func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// requireStore fails the test in CI (CI=true) when a store is unreachable, and skips it
// elsewhere.
func requireStore(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	backendtest.Unavailable(t, "%s unreachable: %v", what, err)
}

func redisStore(t *testing.T) (string, func() int) {
	base := os.Getenv("REDIS_URL")
	if base == "" {
		base = "redis://127.0.0.1:6379/0"
	}
	opts, err := goredis.ParseURL(base)
	require.NoError(t, err)
	admin := goredis.NewClient(opts)
	t.Cleanup(func() { _ = admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	requireStore(t, "Redis at "+base, admin.Ping(ctx).Err())
	prefix := randomName("cmdtest")
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := admin.Keys(ctx, "{"+prefix+"}:*").Result() // a few keys, on a test server
		if len(keys) > 0 {
			_ = admin.Del(ctx, keys...).Err()
		}
	})
	jobs := func() int { // one hash per job, "{prefix}:j:<id>" (backend/redis/lua/lib.lua)
		keys, err := admin.Keys(context.Background(), "{"+prefix+"}:j:*").Result()
		require.NoError(t, err)
		return len(keys)
	}
	return base + "?prefix=" + prefix, jobs
}

func postgresStore(t *testing.T) (string, func() int) {
	base := os.Getenv("PG_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	requireStore(t, "PostgreSQL at "+base, err)
	schema := randomName("cmdtest_")
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		_ = conn.Close(context.Background())
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	jobs := func() int {
		var n int
		require.NoError(t, conn.QueryRow(context.Background(),
			"SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".jobs").Scan(&n))
		return n
	}
	return base + sep + "schema=" + schema, jobs
}
