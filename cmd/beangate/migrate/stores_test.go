package migrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	beanpg "github.com/beangate/beangate/backend/postgres"
	beanredis "github.com/beangate/beangate/backend/redis"
)

// A store under test: open opens it (again: a destination is closed after each run), and the
// test reads what it holds through the same backend.
type store struct {
	name string
	open func(t testing.TB) backend.Backend
	dir  string // binlog
	url  string // redis, postgres
}

// dest opens the store as a destination.
func (s store) dest(t testing.TB) Destination {
	t.Helper()
	if s.name == "binlog" {
		return NewBinlogDest(s.open(t))
	}
	return NewStoreDest(s.open(t))
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// unreachable fails in CI and skips elsewhere.
func unreachable(t testing.TB, what string, err error) {
	t.Helper()
	backendtest.Unavailable(t, "%s unreachable: %v", what, err)
}

func randomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func binlogStore(t testing.TB) store {
	dir := t.TempDir()
	return store{name: "binlog", dir: dir, open: func(t testing.TB) backend.Backend {
		b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: dir}})
		require.NoError(t, err)
		return b
	}}
}

func redisStore(t testing.TB) store {
	url := env("REDIS_URL", "redis://127.0.0.1:6379/0")
	opts, err := goredis.ParseURL(url)
	require.NoError(t, err)
	c := goredis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		unreachable(t, "Redis at "+url, err)
	}
	prefix := randomName("migrate")
	t.Cleanup(func() {
		defer c.Close()
		ctx := context.Background()
		iter := c.Scan(ctx, 0, "{"+prefix+"}*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return store{name: "redis", url: url + "?prefix=" + prefix, open: func(t testing.TB) backend.Backend {
		o, err := beanredis.ParseURL(url + "?prefix=" + prefix)
		require.NoError(t, err)
		b, err := beanredis.New(context.Background(), o)
		require.NoError(t, err)
		return b
	}}
}

func postgresStore(t testing.TB) store {
	url := env("PG_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		unreachable(t, "PostgreSQL at "+url, err)
	}
	schema := randomName("t_")
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		pool.Close()
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return store{name: "postgres", url: url + sep + "schema=" + schema, open: func(t testing.TB) backend.Backend {
		b, err := beanpg.New(context.Background(), beanpg.Options{DSN: url, Schema: schema, VacuumInterval: -1})
		require.NoError(t, err)
		return b
	}}
}

// allStores are the beangate stores, each fresh.
func allStores(t *testing.T) []store {
	return []store{binlogStore(t), redisStore(t), postgresStore(t)}
}
