package postgres

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/stretchr/testify/require"
)

// A session whose end fails because PostgreSQL is down (its connection closing meanwhile) is
// ended once the database is back, without waiting for its reservation's TTR (an hour here): no
// reaper would end it, its gateway being alive. The failure and the success are logged once
// each; a second failed end of the same session is retried once, harmlessly.
func TestFailedSessionEndIsRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ends int // EndSession calls while the database is down
	}{
		{"ended once", 1},
		{"ended twice", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := privateCluster(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			t.Cleanup(cancel)
			var logs gatewaytest.SyncBuffer
			b, err := New(ctx, Options{DSN: c.URL(), Schema: "retry", CommandTimeout: time.Second, LeaseTTL: 1500 * time.Millisecond,
				VacuumInterval: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			s, id := backendtest.HoldReservation(t, b)

			c.Stop()
			for range tt.ends {
				require.Error(t, b.EndSession(ctx, s))
			}
			require.Equal(t, []string{string(s)}, b.leases.unendedList())
			time.Sleep(time.Second) // heartbeats retry in vain meanwhile
			c.Restart()

			require.Eventually(t, func() bool {
				st, err := b.JobStats(ctx, id)
				return err == nil && st.State == backend.Ready
			}, 10*time.Second, 50*time.Millisecond, "the job waits for its TTR")
			require.Eventually(t, func() bool { return len(b.leases.unendedList()) == 0 },
				5*time.Second, 50*time.Millisecond, "the end is still being retried")
			var n int
			require.NoError(t, b.pool.QueryRow(ctx, "SELECT count(*) FROM retry.sessions WHERE id = $1", string(s)).Scan(&n))
			require.Zero(t, n, "the session is still registered")
			ts, err := b.TubeStats(ctx, "default")
			require.NoError(t, err)
			require.Zero(t, ts.Using, "the session's tube references are left")
			require.Zero(t, ts.Watching, "the session's tube references are left")
			require.Equal(t, 1, strings.Count(logs.String(), "ending a session failed"), "logs: %s", logs.String())
			require.Equal(t, 1, strings.Count(logs.String(), "ended sessions on retry"), "logs: %s", logs.String())
		})
	}
}
