package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

func TestPutReserveDeleteCycle(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	b := newTestBackend(t, clock)
	ctx := testCtx(t)
	s := backend.SessionID("p1.1")
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	id, err := b.Put(ctx, backend.PutParams{Session: s, Tube: "default", Priority: 5, TTR: time.Second * 10, Body: []byte("hi")})
	require.NoError(t, err)
	job, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
	require.NoError(t, err)
	require.Equal(t, id, job.ID)
	require.Equal(t, []byte("hi"), job.Body)
	js, err := b.JobStats(ctx, id)
	require.NoError(t, err)
	require.Equal(t, backend.Reserved, js.State)
	require.Equal(t, 10*time.Second, js.TimeLeft)
	require.NoError(t, b.Delete(ctx, s, id))
	require.ErrorIs(t, b.Delete(ctx, s, id), backend.ErrNotFound)
	_, err = b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
	require.ErrorIs(t, err, backend.ErrTimedOut)
	st, err := b.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), st.TotalJobs)
	require.Equal(t, uint64(1), st.Tubes)
}
