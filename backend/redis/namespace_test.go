package redis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Two namespaces on one Redis are independent queues (ids, jobs, tubes, stats), and every key
// a namespace uses starts with its one hash tag "{prefix}:", so that all of them hash to one
// Cluster slot.
func TestNamespacesShareOneRedisApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefixes := []string{newPrefix(t), newPrefix(t)}
	for i, p := range prefixes {
		b := newBackend(t, p, nil, time.Second)
		s := backend.SessionID("ns.1") // the same session id in both: they must not meet
		require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
		require.NoError(t, b.UseTube(ctx, s, "jobs"))
		require.NoError(t, b.WatchTube(ctx, s, "jobs"))
		// One job in each state, so that every kind of key exists.
		put := func(delay time.Duration) uint64 {
			id, err := b.Put(ctx, backend.PutParams{Tube: "jobs", TTR: time.Minute, Delay: delay, Body: []byte(p)})
			require.NoError(t, err)
			return id
		}
		require.Equal(t, uint64(1), put(0), "namespace %d has its own id sequence", i)
		require.NoError(t, b.Bury(ctx, s, mustReserve(t, b, s, put(0)), 0))
		mustReserve(t, b, s, put(0))
		put(time.Hour)
		put(0)
		require.NoError(t, b.PauseTube(ctx, "jobs", time.Hour))

		j, err := b.Peek(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, p, string(j.Body), "namespace %d sees its own job 1", i)
		st, err := b.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, backend.Stats{UrgentJobs: 2, ReadyJobs: 2, ReservedJobs: 1, DelayedJobs: 1,
			BuriedJobs: 1, TotalJobs: 5, Tubes: 2}, *st, "namespace %d counts only its own", i)
	}

	admin := adminClient(t)
	for _, p := range prefixes {
		// SCAN, not KEYS: the server is shared. The prefix is random: these are only its keys.
		iter := admin.Scan(ctx, 0, "*"+p+"*", 1000).Iterator()
		n := 0
		for iter.Next(ctx) {
			n++
			require.True(t, strings.HasPrefix(iter.Val(), "{"+p+"}:"), "key %q outside the namespace's hash tag", iter.Val())
		}
		require.NoError(t, iter.Err())
		require.Positive(t, n)
	}
}

// mustReserve reserves job id for s and returns id.
func mustReserve(t *testing.T, b backend.Backend, s backend.SessionID, id uint64) uint64 {
	t.Helper()
	_, err := b.ReserveJob(context.Background(), s, id)
	require.NoError(t, err)
	return id
}
