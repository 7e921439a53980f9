package postgres

import (
	"context"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/faulttest"
)

// A call whose caller gives up while its statement runs (a worker hanging up on its waiting
// reserve, a gateway's deadline shorter than the command timeout) has pgx end the statement and
// close its connection. The database is fine: no outage is noted, and no reservation is
// reported possibly forgotten, which would have the gateway close the connections of workers
// that hold jobs.
func TestCallerGivingUpIsNoSignOfTheDatabase(t *testing.T) {
	t.Parallel()
	release := func(ctx context.Context, b *Backend, job uint64) error {
		return b.Release(ctx, backend.ReleaseParams{Session: "worker", ID: job})
	}
	touch := func(ctx context.Context, b *Backend, job uint64) error { return b.Touch(ctx, "worker", job) }
	tick := func(ctx context.Context, b *Backend, _ uint64) error { return b.tickPolicies(ctx, true) }
	const lockJob, lockJobs = "SELECT 1 FROM {{jobs}} WHERE id = $1 FOR UPDATE", "LOCK TABLE {{jobs}} IN EXCLUSIVE MODE"
	tests := []struct {
		name string
		// lock, unless empty, holds what call's statement needs until call has given up.
		lock string
		// link, unless zero, delays each byte to and from the database by that much: a distant
		// one, where a statement answers within the command timeout but a new connection (a
		// probe of reachability) takes longer than a probe may.
		link time.Duration
		call func(ctx context.Context, b *Backend, job uint64) error
		end  func(ctx context.Context) (context.Context, context.CancelFunc)
	}{
		{"ReleaseCancelled", lockJob, 0, release, cancelSoon},
		{"TouchPastDeadline", lockJob, 0, touch, deadlineSoon},
		{"PolicyTickPastDeadline", lockJobs, 0, tick, deadlineSoon},
		{"PolicyTickPastDeadlineOnADistantDatabase", "", 300 * time.Millisecond, tick, deadlineSoon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			schema := testSchema(t)
			b := newTestBackend(t, nil, schema)
			if tt.link > 0 {
				b = distantBackend(t, schema, tt.link)
			}
			setDurableEvery(b, time.Hour) // the holder's reservation stays not known durable
			require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "ruled", ExpireAfter: time.Hour}))
			var lost atomic.Int32
			b.ObserveLostReservations(func(ids []backend.SessionID) { lost.Add(int32(len(ids))) })

			for _, s := range []backend.SessionID{"holder", "worker"} {
				require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
				_, err := b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte(s)})
				require.NoError(t, err)
			}
			_, err := b.Reserve(ctx, backend.ReserveParams{Session: "holder", Tubes: []string{"default"}})
			require.NoError(t, err)
			job, err := b.Reserve(ctx, backend.ReserveParams{Session: "worker", Tubes: []string{"default"}})
			require.NoError(t, err)
			require.True(t, b.undurable.waiting())

			if tt.lock != "" {
				tx, err := admin(t).Begin(ctx)
				require.NoError(t, err)
				defer func() { _ = tx.Rollback(ctx) }()
				lock := strings.ReplaceAll(tt.lock, "{{jobs}}", schema+".jobs")
				var args []any
				if strings.Contains(lock, "$1") {
					args = append(args, int64(job.ID))
				}
				_, err = tx.Exec(ctx, lock, args...)
				require.NoError(t, err)
			}

			cctx, cancel := tt.end(ctx)
			err = tt.call(cctx, b, job.ID)
			cancel()
			require.Error(t, err)
			require.ErrorIs(t, err, cctx.Err())

			// pgx closes the interrupted connection in the background, and a probe of
			// reachability would take its time: give both time to.
			time.Sleep(2 * time.Second)
			require.NoError(t, b.reach.Check(), "a caller's giving up was taken for an outage")
			require.Zero(t, lost.Load(), "reservations were reported possibly forgotten")
		})
	}
}

// distantBackend opens a Backend on schema (migrated already) through a link that delays every
// byte by delay each way.
func distantBackend(t *testing.T, schema string, delay time.Duration) *Backend {
	t.Helper()
	u, err := url.Parse(testURL())
	require.NoError(t, err)
	u.Host = faulttest.SlowLink(t, u.Host, delay)
	opts := testOptions(schema, nil)
	opts.DSN, opts.SkipMigrate = u.String(), true
	opts.LeaseTTL = time.Minute // renewals are slow here, and must not matter
	b, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// cancelSoon is a ctx cancelled 200 ms from now, as by a client that hangs up.
func cancelSoon(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	return ctx, func() { timer.Stop(); cancel() }
}

// deadlineSoon is a ctx whose deadline is 200 ms from now, well inside the command timeout.
func deadlineSoon(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 200*time.Millisecond)
}
