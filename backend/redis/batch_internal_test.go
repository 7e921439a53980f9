package redis

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// lua/batch.lua answers each operation in its place, as if it had been called alone: one that
// fails (here: a name the library does not have) answers an error and the others still run,
// false (peek of a missing job) comes back as nil, and an operation's own now is used.
func TestBatchRepliesPerOperation(t *testing.T) {
	b := newInternalBackend(t)
	ctx := context.Background()

	put := func(now string) []any { return []any{"put", now, 7, "default", "0", "0", "60000", "body", "0", ""} }
	args := []any{b.base}
	args = append(args, put("")...)
	args = append(args, "no_such_op", "", 0)
	args = append(args, "peek", "", 1, padID(1<<40))
	args = append(args, put("1000")...)
	res, err := b.client.FCall(ctx, b.sc.batch, b.keys, args...).Result()
	require.NoError(t, err)
	replies, ok := res.([]any)
	require.True(t, ok, "%T", res)
	require.Len(t, replies, 4)

	first, ok := replies[0].(int64)
	require.True(t, ok, "put answers its id: %T %v", replies[0], replies[0])
	require.Implements(t, (*goredis.Error)(nil), replies[1], "the unknown operation answers an error")
	require.Nil(t, replies[2], "peek of a missing job answers false, read as nil")
	require.Equal(t, first+1, replies[3], "the put after the failed operation still ran")

	created, err := b.client.HGet(ctx, b.base+":j:"+padID(uint64(first+1)), "c").Result()
	require.NoError(t, err)
	require.Equal(t, "1000", created, "the operation's own now")
}

// newInternalBackend opens a Backend on the test Redis under a fresh namespace, deleted when
// the test ends (requireRedis fails rather than skips under CI=true).
func newInternalBackend(t *testing.T) *Backend {
	t.Helper()
	return newTestBackend(t, newPrefix(t), nil, 0)
}
