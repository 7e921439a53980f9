package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// A waiting reserve's try that reaches Redis after its session's end (EndSession ran while the
// try was in flight) brings the session back to count itself as waiting, since wait (lib.lua)
// restores a session the store does not know. The reserve must end it again: otherwise the
// store keeps a session nobody ends, holding its tubes until its gateway process dies.
func TestReserveEndsAgainTheSessionItsLateTryBroughtBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := newPrefix(t)
	b := newTestBackend(t, prefix, nil, time.Minute) // no heartbeat within the test
	var holding atomic.Bool
	held, release := make(chan struct{}, 1), make(chan struct{})
	// Set after New's own calls; nothing else calls meanwhile (see SetBeforeSend).
	b.batch.SetBeforeSend(func() {
		if holding.Load() {
			held <- struct{}{}
			<-release
		}
	})
	admin, err := testClient(redisURL())
	require.NoError(t, err)
	defer admin.Close()
	key := func(k string) string { return "{" + prefix + "}:" + k }
	waiting := func() int64 {
		n, _ := admin.HGet(ctx, key("t:late"), "wt").Int64()
		return n
	}

	s := backend.SessionID("late.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	require.NoError(t, b.WatchTube(ctx, s, "late"))
	done := make(chan error, 1)
	go func() {
		_, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default", "late"}, Timeout: -1})
		done <- err
	}()
	require.Eventually(t, func() bool { return waiting() == 1 }, 5*time.Second, 5*time.Millisecond)

	// The reserve's next try is held before it is sent, while the session's end runs in Redis
	// and EndSession marks the reserve ended: the order of an end that overtook the try.
	holding.Store(true)
	b.waiters.wakeAll()
	<-held
	require.NoError(t, admin.FCall(ctx, b.sc.fns[opSessionEnd], b.keys, b.base, "", string(s), s.Process()).Err())
	b.waiters.endSession(s)
	holding.Store(false)
	close(release)
	require.ErrorIs(t, <-done, errSessionEnded)

	require.Zero(t, waiting())
	n, err := admin.Exists(ctx, key("s:"+string(s)), key("s:"+string(s)+":w"), key("t:late")).Result()
	require.NoError(t, err)
	require.Zero(t, n, "the session and the tube only it watched are gone")
	member, err := admin.SIsMember(ctx, key("p:"+s.Process()), string(s)).Result()
	require.NoError(t, err)
	require.False(t, member, "the session is no longer registered under its process")
}
