package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// A put into a tube a local reserve is waiting on reserves its job for that reserve in the put's
// own statement (the job is reserved at the moment it was created: no reserve statement ran
// after it), unless that reserve would not have taken this job; then the job is made ready and
// the reserve takes what a reserve statement gives it.
func TestPutHandsItsJobToAWaitingReserve(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  func(t *testing.T, ctx context.Context, b *Backend) // before the reserve waits
		watch  []string
		prio   uint32
		handed bool
		want   string // the body the reserve gets
	}{
		{name: "Waiting", watch: []string{"t"}, handed: true, want: "new"},
		{name: "WatchingOtherTubesToo", watch: []string{"u", "t"}, handed: true, want: "new"},
		{name: "BetterJobReadyInAPausedTube", watch: []string{"u", "t"}, handed: true, want: "new",
			setup: func(t *testing.T, ctx context.Context, b *Backend) {
				_, err := b.Put(ctx, backend.PutParams{Tube: "u", Priority: 0, TTR: time.Minute, Body: []byte("paused")})
				require.NoError(t, err)
				require.NoError(t, b.PauseTube(ctx, "u", time.Hour))
			}},
		{name: "PausedTube", watch: []string{"t"}, handed: false, want: "",
			setup: func(t *testing.T, ctx context.Context, b *Backend) {
				_, err := b.Put(ctx, backend.PutParams{Tube: "t", Delay: time.Hour, TTR: time.Minute, Body: []byte("x")})
				require.NoError(t, err) // the tube exists
				require.NoError(t, b.PauseTube(ctx, "t", 3*time.Second))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			b := newTestBackend(t, nil)
			if c.setup != nil {
				c.setup(t, ctx, b)
			}
			s := backend.SessionID("hand." + c.name)
			require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
			got := startWaitingReserve(t, ctx, b, backend.ReserveParams{Session: s, Tubes: c.watch, Timeout: 2 * time.Second}, "t")
			id, err := b.Put(ctx, backend.PutParams{Tube: "t", Priority: c.prio, TTR: time.Minute, Body: []byte("new")})
			require.NoError(t, err)
			r := <-got
			if c.want == "" {
				require.ErrorIs(t, r.err, backend.ErrTimedOut)
			} else {
				require.NoError(t, r.err)
				require.Equal(t, c.want, string(r.job.Body))
				require.Equal(t, id, r.job.ID)
			}
			var state int
			var handed bool
			require.NoError(t, b.pool.QueryRow(ctx, "SELECT state, reserved_at IS NOT DISTINCT FROM created_at FROM "+
				pgx.Identifier{b.opts.Schema}.Sanitize()+".jobs WHERE id = $1", int64(id)).Scan(&state, &handed))
			require.Equal(t, c.handed, handed)
		})
	}
}

// A server lost while a put that claimed a waiting reserve is in flight may have committed the
// job reserved for that reserve's session, which the reserve, answered "nothing", would not
// learn of: the session is reported lost, as one whose reserve is in flight is.
func TestServerLostDuringAHandingPutReportsItsReserve(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	b := newTestBackend(t, nil)
	var lost []backend.SessionID
	b.ObserveLostReservations(func(ids []backend.SessionID) { lost = append(lost, ids...) })
	s := backend.SessionID("hand.lost")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	done := startWaitingReserve(t, ctx, b, backend.ReserveParams{Session: s, Tubes: []string{"t"}, Timeout: time.Second}, "t")
	it := b.newPutItem(backend.PutParams{Tube: "t", TTR: time.Minute, Body: []byte("x")})
	require.NotNil(t, it.to, "the put claimed the waiting reserve")
	b.serverLost()
	require.Equal(t, []backend.SessionID{s}, lost)
	b.hand(it, writeResult{}, false) // the put failed: the reserve goes on, and times out
	require.ErrorIs(t, (<-done).err, backend.ErrTimedOut)
}

// waiting reports whether a reserve waits on tube, idle (a put may claim it).
func (ws *waiters) waiting(tube string) bool {
	return ws.idleCount(tube) > 0
}
