package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
)

// The shared-server helpers live in export_test.go, so that in-package tests use them too.
var (
	redisURL        = beanredis.RedisURL
	requireRedis    = beanredis.RequireRedis
	deleteNamespace = beanredis.DeleteNamespace
	testClient      = beanredis.TestClient
)

// newPrefix is a fresh namespace whose keys are deleted when the test ends.
func newPrefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "bgtest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteNamespace(redisURL(), prefix) })
	return prefix
}

// newBackend opens a Backend on the shared Redis under prefix; clock may be nil.
func newBackend(t testing.TB, prefix string, clock backend.Clock, lease time.Duration) *beanredis.Backend {
	t.Helper()
	requireRedis(t)
	b, err := beanredis.New(context.Background(), beanredis.Options{
		URL: redisURL(), Prefix: prefix, Clock: clock, LeaseTTL: lease, CommandTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}
