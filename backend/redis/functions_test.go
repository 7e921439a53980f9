package redis_test

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// A Redis that forgot the function library (FUNCTION FLUSH, or a restart without persistence)
// gets it loaded again by the next call, which then succeeds.
func TestFunctionLibraryReloadedWhenLost(t *testing.T) {
	t.Parallel()
	srv := startPrivateRedis(t) // FUNCTION FLUSH on the shared server would disturb other tests
	b := srv.newBackend("reload", 2*time.Second)
	ctx := context.Background()

	admin := srv.client()
	defer admin.Close()
	libs, err := admin.FunctionList(ctx, goredis.FunctionListQuery{}).Result()
	require.NoError(t, err)
	require.Len(t, libs, 1, "New loads one library")

	id, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("a")})
	require.NoError(t, err)
	require.NoError(t, admin.FunctionFlush(ctx).Err())

	id2, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("b")})
	require.NoError(t, err, "the call after FUNCTION FLUSH reloads the library")
	require.Equal(t, id+1, id2)
	j, err := b.Peek(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "a", string(j.Body))
}
