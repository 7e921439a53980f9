package redis_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A session whose end fails because Redis is unavailable (a connection closing meanwhile) is
// ended once Redis is back, without waiting for its reservation's TTR (an hour here): the
// reapers leave it alone, its gateway being alive. The failure and the success are logged once
// each. When Redis was only stalled, the failed end may have run after all; ending it again is
// harmless.
func TestFailedSessionEndIsRetried(t *testing.T) {
	t.Parallel()
	for _, tt := range redisOutages(time.Second) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startPrivateRedis(t)
			var logs gatewaytest.SyncBuffer
			ctx := context.Background()
			b, err := beanredis.New(ctx, beanredis.Options{
				URL: srv.url(), Prefix: "retry", CommandTimeout: 300 * time.Millisecond,
				LeaseTTL: 3 * time.Second, // outlives the outage: only the retry can return the job
				Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			s, id := backendtest.HoldReservation(t, b)

			restore := tt.disturb(t, srv)
			require.Error(t, b.EndSession(ctx, s))
			require.Equal(t, []backend.SessionID{s}, beanredis.UnendedSessions(b))
			restore()

			admin := srv.client()
			defer admin.Close()
			require.Eventually(t, func() bool {
				st, err := b.JobStats(ctx, id)
				return err == nil && st.State == backend.Ready
			}, 10*time.Second, 50*time.Millisecond, "the job waits for its TTR")
			require.Eventually(t, func() bool { return len(beanredis.UnendedSessions(b)) == 0 },
				10*time.Second, 50*time.Millisecond, "the end is still being retried")
			require.False(t, admin.SIsMember(ctx, "{retry}:p:"+s.Process(), string(s)).Val(), "the session is still registered")
			require.Zero(t, admin.Exists(ctx, "{retry}:s:"+string(s)).Val(), "the session's keys are left")
			require.Equal(t, 1, strings.Count(logs.String(), "ending a session failed"), "logs: %s", logs.String())
			require.Equal(t, 1, strings.Count(logs.String(), "ended sessions on retry; their reservations are ready again\" sessions=1"), "logs: %s", logs.String())
		})
	}
}
