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
	require.NoError(t, b.BeginSession(ctx, s))
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
