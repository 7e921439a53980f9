package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	"github.com/stretchr/testify/require"
)

// An expired lease only makes its process suspect, as every lease has expired after a database
// outage longer than the lease: a process whose heartbeat renews it within the grace keeps its
// sessions and reservations, and one that never heartbeats again is reaped once the grace has
// passed. Setting the lease into the past stands for the outage.
func TestReaperGivesAnExpiredLeaseAGrace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		heartbeats bool // the process keeps heartbeating after its lease expired
	}{
		{"a live gateway keeps its sessions", true},
		{"a gateway that never heartbeats again is reaped after the grace", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			schema := testSchema(t)
			ctx := testCtx(t)
			reaper, owner := newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
			lease, grace := owner.opts.LeaseTTL, reaper.reapGrace()
			s, id := backendtest.HoldReservation(t, owner)
			if !tt.heartbeats {
				require.NoError(t, owner.Close())
			}
			pool := admin(t)
			state := func() backend.State {
				st, err := reaper.JobStats(ctx, id)
				require.NoError(t, err)
				return st.State
			}
			rows := func(query string) int {
				var n int
				require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+"."+query, s.Process()).Scan(&n))
				return n
			}

			lost := time.Now()
			_, err := pool.Exec(ctx, "UPDATE "+schema+".processes SET lease_until = now() - interval '1 hour' WHERE process = $1", s.Process())
			require.NoError(t, err)
			require.NoError(t, reaper.reapDeadProcesses(ctx))
			require.Equal(t, backend.Reserved, state(), "reaped at the first sight of an expired lease")

			if tt.heartbeats {
				require.Eventually(t, func() bool { return rows("processes WHERE process = $1 AND lease_until > now()") == 1 },
					grace-time.Since(lost), 10*time.Millisecond, "the heartbeat did not renew the lease within the grace")
				time.Sleep(time.Until(lost.Add(grace + lease))) // past the grace: several reap ticks
				require.NoError(t, reaper.reapDeadProcesses(ctx))
				require.Equal(t, backend.Reserved, state(), "a live gateway's reservation was returned")
				require.Equal(t, 1, rows("sessions WHERE process = $1"), "a live gateway's session was ended")
				require.Empty(t, reaper.leases.confirmed(time.Now(), 0), "a renewed lease left the suspicion")
				return
			}
			require.Eventually(t, func() bool { return state() == backend.Ready },
				grace+lease, 20*time.Millisecond, "a dead gateway's reservation did not come back")
			require.GreaterOrEqual(t, time.Since(lost), grace, "reaped before the grace")
			require.Zero(t, rows("sessions WHERE process = $1"), "the dead gateway's session is left")
			require.Zero(t, rows("processes WHERE process = $1"), "the dead gateway is not forgotten")
		})
	}
}

// The outage itself: PostgreSQL stopped for longer than the lease comes back with every lease
// expired, and yet neither live gateway's reservation is returned by the other's reaper.
func TestOutageLongerThanTheLeaseEndsNoLiveSession(t *testing.T) {
	t.Parallel()
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	const lease = 1500 * time.Millisecond
	opts := Options{DSN: c.URL(), Schema: "outage", CommandTimeout: time.Second, LeaseTTL: lease, VacuumInterval: -1}
	var gateways []*Backend
	held := map[backend.SessionID]uint64{}
	for range 2 {
		b, err := New(ctx, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		s, id := backendtest.HoldReservation(t, b)
		gateways = append(gateways, b)
		held[s] = id
	}

	c.Stop()
	time.Sleep(lease + lease/2) // every lease, renewed before, has expired when it starts again
	c.Restart()
	for _, b := range gateways {
		require.Eventually(t, func() bool { _, err := b.Stats(ctx); return err == nil }, 15*time.Second, 50*time.Millisecond)
	}
	time.Sleep(2 * lease) // the grace and then some: several heartbeats and reap ticks each

	for s, id := range held {
		st, err := gateways[0].JobStats(ctx, id)
		require.NoError(t, err)
		require.Equal(t, backend.Reserved, st.State, "a live gateway's reservation was returned")
		var n int
		require.NoError(t, gateways[0].pool.QueryRow(ctx, "SELECT count(*) FROM outage.sessions WHERE id = $1", string(s)).Scan(&n))
		require.Equal(t, 1, n, "a live gateway's session was ended")
	}
}

// The suspicions themselves: a first sight only suspects, a suspect is confirmed once seen
// expired for the grace, a renewed lease clears it, a failed call clears them all, and this
// Backend's own processes are never confirmed.
func TestSuspicions(t *testing.T) {
	t.Parallel()
	const grace = time.Second
	t0 := time.Now()
	type sight struct {
		at      time.Duration
		expired []string // nil with failed: a failed call
		failed  bool
	}
	tests := []struct {
		name   string
		own    []string
		sights []sight
		at     time.Duration
		want   []string
	}{
		{"first sight only suspects", nil, []sight{{at: 0, expired: []string{"a"}}}, grace - time.Millisecond, nil},
		{"expired for the grace", nil, []sight{{at: 0, expired: []string{"a"}}, {at: grace / 2, expired: []string{"a"}}}, grace, []string{"a"}},
		{"renewed within the grace", nil, []sight{{at: 0, expired: []string{"a"}}, {at: grace / 2, expired: []string{}}, {at: grace, expired: []string{"a"}}}, 2 * grace, []string{"a"}},
		{"renewed, then seen again", nil, []sight{{at: 0, expired: []string{"a"}}, {at: grace / 2, expired: []string{}}, {at: grace, expired: []string{"a"}}}, grace + grace/2, nil},
		{"a failed call clears them", nil, []sight{{at: 0, expired: []string{"a", "b"}}, {at: grace / 2, failed: true}, {at: grace, expired: []string{"a", "b"}}}, grace + grace/2, nil},
		{"own processes are alive", []string{"a"}, []sight{{at: 0, expired: []string{"a", "b"}}}, grace, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLeases()
			for _, p := range tt.own {
				l.add(p)
			}
			for _, s := range tt.sights {
				if s.failed {
					l.clearSuspects()
				} else {
					l.suspect(t0.Add(s.at), s.expired)
				}
			}
			require.ElementsMatch(t, tt.want, l.confirmed(t0.Add(tt.at), grace))
		})
	}
}
