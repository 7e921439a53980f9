package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	beanredis "github.com/beangate/beangate/backend/redis"
)

// A missing lease only makes its process suspect, as every lease is missing after a Redis
// outage longer than the lease (expiry times are absolute): a process whose heartbeat renews it
// within the grace keeps its sessions and reservations, and one that never heartbeats again is
// reaped once the grace has passed. Deleting the lease key stands for the outage.
func TestReaperGivesAMissingLeaseAGrace(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	tests := []struct {
		name       string
		heartbeats bool // the process keeps heartbeating after its lease is lost
	}{
		{"a live gateway keeps its sessions", true},
		{"a gateway that never heartbeats again is reaped after the grace", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := newPrefix(t)
			const lease = 2 * time.Second // loops every 667 ms and 1 s, a grace of 1 s
			owner := newBackend(t, prefix, nil, lease)
			reaper := newBackend(t, prefix, nil, lease)
			grace := beanredis.ReapGrace(reaper)
			admin, err := testClient(redisURL())
			require.NoError(t, err)
			defer admin.Close()
			ctx := context.Background()

			s, id := backendtest.HoldReservation(t, owner)
			if !tt.heartbeats {
				require.NoError(t, owner.Close())
			}
			base := "{" + prefix + "}"
			leaseKey, procKey := base+":lease:"+s.Process(), base+":p:"+s.Process()
			state := func() backend.State {
				st, err := reaper.JobStats(ctx, id)
				require.NoError(t, err)
				return st.State
			}

			lost := time.Now()
			require.NoError(t, admin.Del(ctx, leaseKey).Err())
			require.NoError(t, reaper.Reap(ctx))
			require.Equal(t, backend.Reserved, state(), "reaped at the first sight of a missing lease")

			if tt.heartbeats {
				require.Eventually(t, func() bool { return admin.Exists(ctx, leaseKey).Val() == 1 },
					grace-time.Since(lost), 10*time.Millisecond, "the heartbeat did not renew the lease within the grace")
				time.Sleep(time.Until(lost.Add(grace + lease/2))) // past the grace, and a reaper run or two
				require.NoError(t, reaper.Reap(ctx))
				require.Equal(t, backend.Reserved, state(), "a live gateway's reservation was returned")
				require.True(t, admin.SIsMember(ctx, procKey, string(s)).Val(), "a live gateway's session was ended")
				require.Zero(t, admin.Exists(ctx, base+":suspect:"+s.Process()).Val(), "a renewed lease left the suspicion")
				return
			}
			require.Eventually(t, func() bool { return state() == backend.Ready },
				grace+lease, 20*time.Millisecond, "a dead gateway's reservation did not come back")
			// Its suspicion was recorded no sooner than lost (both are this host's clock).
			require.GreaterOrEqual(t, time.Since(lost), grace-5*time.Millisecond, "reaped before the grace")
			require.Zero(t, admin.Exists(ctx, procKey, base+":suspect:"+s.Process()).Val(), "left its keys")
			require.False(t, admin.SIsMember(ctx, base+":procs", s.Process()).Val())
		})
	}
}

// The outage itself: Redis down for longer than the lease comes back with every lease expired
// (AOF keeps absolute expiry times), and yet the live gateway's reservation stays its own.
func TestRedisOutageLongerThanTheLeaseEndsNoLiveSession(t *testing.T) {
	t.Parallel()
	srv := startPrivateRedis(t)
	const lease = 2 * time.Second
	ctx := context.Background()
	b, err := beanredis.New(ctx, beanredis.Options{
		URL: srv.url(), Prefix: "outage", LeaseTTL: lease, CommandTimeout: 300 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	s, id := backendtest.HoldReservation(t, b)

	srv.kill()
	time.Sleep(lease + lease/4) // the lease, set before, has expired when Redis restarts
	srv.start()
	// The first reaper run after the outage, before the heartbeat (any gateway's run may be).
	require.Eventually(t, func() bool { return b.Reap(ctx) == nil }, 5*time.Second, 10*time.Millisecond)
	admin := srv.client()
	defer admin.Close()
	time.Sleep(lease + lease/2) // the grace and then some: several reaper runs and heartbeats
	st, err := b.JobStats(ctx, id)
	require.NoError(t, err)
	require.Equal(t, backend.Reserved, st.State, "a live gateway's reservation was returned")
	require.True(t, admin.SIsMember(ctx, "{outage}:p:"+s.Process(), string(s)).Val(), "a live gateway's session was ended")
}
