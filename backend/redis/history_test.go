package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// A job's history is a list in the job's keys, under the namespace's hash tag, and leaves no
// key behind: not when the job is deleted, flushed or expired, nor when its tube stops keeping
// histories.
func TestHistoryListsGoWithTheirJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPrefix(t)
	b := newBackend(t, p, nil, time.Second)
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "kept*", History: true}))
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "kept-expiring", History: true, ExpireAfter: 100 * time.Millisecond}))
	s := backend.SessionID("h.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{Addr: "127.0.0.1:1"}))
	put := func(tube string) uint64 {
		id, err := b.Put(ctx, backend.PutParams{Session: s, Tube: tube, TTR: time.Minute, Body: []byte(tube)})
		require.NoError(t, err)
		return id
	}
	admin := adminClient(t)
	hist := func(id uint64) string { return fmt.Sprintf("{%s}:j:%020d:h", p, id) }
	exists := func(id uint64) bool {
		n, err := admin.Exists(ctx, hist(id)).Result()
		require.NoError(t, err)
		return n == 1
	}

	deleted := put("kept")
	require.True(t, exists(deleted))
	require.NoError(t, b.Delete(ctx, s, deleted))
	require.False(t, exists(deleted), "deleted")

	flushed := put("kept")
	n, err := b.DeleteJobs(ctx, "kept", backend.Ready, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, exists(flushed), "flushed")

	expiring := put("kept-expiring")
	require.True(t, exists(expiring))
	require.Eventually(t, func() bool { return !exists(expiring) }, 5*time.Second, 20*time.Millisecond, "expired")

	dropped := put("kept")
	require.True(t, exists(dropped))
	require.NoError(t, b.ClearPolicy(ctx, "kept*"))
	require.False(t, exists(dropped), "its tube keeps no history now")
	h, err := b.JobHistory(ctx, dropped)
	require.NoError(t, err)
	require.Empty(t, h)
}
