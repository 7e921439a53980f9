package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// A job moved into a tube is filed under that tube's policy: matched by a unique put there, and
// expired on that tube's time.
func TestAJobMovedInIsFiledUnderItsNewTubesPolicy(t *testing.T) {
	clock := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := newTestBackend(t, clock)
	ctx := testCtx(t)
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "uniq", Unique: true, ExpireAfter: time.Minute}))
	s := backend.SessionID("mover.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	id, err := b.Put(ctx, backend.PutParams{Session: s, Tube: "elsewhere", TTR: time.Minute, Body: []byte("x")})
	require.NoError(t, err)
	n, err := b.MoveJobs(ctx, "elsewhere", "uniq", backend.Ready, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	again, err := b.Put(ctx, backend.PutParams{Session: s, Tube: "uniq", TTR: time.Minute, Body: []byte("x")})
	require.NoError(t, err)
	require.Equal(t, id, again)
	clock.Advance(time.Minute)
	_, err = b.JobStats(ctx, id)
	require.ErrorIs(t, err, backend.ErrNotFound)
}

// A slot of a capped tube freed on one gateway wakes a reserve waiting on another at once (its
// poll is off: only the notification can wake it), whichever way the reservation ends.
func TestAFreedSlotWakesAnotherGatewaysWaiter(t *testing.T) {
	for _, end := range []string{"delete", "bury", "release-delayed"} {
		t.Run(end, func(t *testing.T) {
			schema := testSchema(t)
			holder, waiting := newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
			waiting.poll = time.Hour
			ctx := testCtx(t)
			require.NoError(t, holder.SetPolicy(ctx, backend.Policy{Tube: "work", MaxReserved: 1}))
			h, w := backend.SessionID("holder.1"), backend.SessionID("waiter.1")
			require.NoError(t, holder.BeginSession(ctx, h, backend.SessionInfo{}))
			require.NoError(t, waiting.BeginSession(ctx, w, backend.SessionInfo{}))
			first, err := holder.Put(ctx, backend.PutParams{Session: h, Tube: "work", TTR: time.Minute, Body: []byte("a")})
			require.NoError(t, err)
			second, err := holder.Put(ctx, backend.PutParams{Session: h, Tube: "work", Priority: 1, TTR: time.Minute, Body: []byte("b")})
			require.NoError(t, err)
			_, err = holder.ReserveJob(ctx, h, first)
			require.NoError(t, err)
			require.Eventually(t, waiting.policiesActive, 5*time.Second, 10*time.Millisecond)
			got := make(chan uint64, 1)
			go func() {
				j, err := waiting.Reserve(ctx, backend.ReserveParams{Session: w, Tubes: []string{"work"}, Timeout: -1})
				if err == nil {
					got <- j.ID
				}
			}()
			time.Sleep(200 * time.Millisecond) // waiting, held back by the cap
			require.Empty(t, got)
			switch end {
			case "delete":
				require.NoError(t, holder.Delete(ctx, h, first))
			case "bury":
				require.NoError(t, holder.Bury(ctx, h, first, 0))
			case "release-delayed":
				require.NoError(t, holder.Release(ctx, backend.ReleaseParams{Session: h, ID: first, Delay: time.Hour}))
			}
			select {
			case id := <-got:
				require.Equal(t, second, id)
			case <-time.After(3 * time.Second):
				t.Fatal("the waiting reserve was not woken by the freed slot")
			}
		})
	}
}

// A reservation whose TTR ran out under retry-delay, found by a reserve before any policy tick
// (one another gateway made, that this one's ticks did not know of), is backed off by the
// reserve's promote step as by the tick: delayed, or ready at once if its backoff is over too.
func TestAReserveBacksOffAReservationNoTickSaw(t *testing.T) {
	for _, c := range []struct {
		name  string
		late  time.Duration // how long after the deadline the reserve comes
		state backend.State
	}{
		{"BackoffAhead", 0, backend.Delayed},
		{"BackoffOver", 3 * time.Second, backend.Ready},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			b := newTestBackend(t, clock)
			ctx := testCtx(t)
			require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "work", RetryDelay: 2 * time.Second}))
			s := backend.SessionID("worker.1")
			require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
			require.NoError(t, b.WatchTube(ctx, s, "work"))
			id, err := b.Put(ctx, backend.PutParams{Session: s, Tube: "work", TTR: 5 * time.Second, Body: []byte("x")})
			require.NoError(t, err)
			reserve := func() (*backend.Job, error) {
				return b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"work"}})
			}
			j, err := reserve()
			require.NoError(t, err)
			require.Equal(t, id, j.ID)
			clock.Advance(5*time.Second + c.late)
			b.pol.nextMu.Lock()
			b.pol.next = clock.Now().Add(time.Hour) // no tick: the reserve's promote step meets it
			b.pol.nextMu.Unlock()

			j, err = reserve()
			if c.state == backend.Delayed {
				require.ErrorIs(t, err, backend.ErrTimedOut)
				st, err := b.JobStats(ctx, id)
				require.NoError(t, err)
				require.Equal(t, backend.Delayed, st.State)
				require.Equal(t, 2*time.Second, st.Delay)
				require.Equal(t, 2*time.Second, st.TimeLeft)
				require.Equal(t, uint32(1), st.Timeouts)
				return
			}
			require.NoError(t, err)
			require.Equal(t, id, j.ID)
			require.Equal(t, c.late-2*time.Second, j.ReadyFor) // ready since its backoff ended
			st, err := b.JobStats(ctx, id)
			require.NoError(t, err)
			require.Equal(t, 2*time.Second, st.Delay)
			require.Equal(t, uint32(1), st.Timeouts)
		})
	}
}
