package postgres

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/stretchr/testify/require"
)

// Close looks like a crash to other gateways: the sessions stay until the lease runs out, then
// another Backend ends them and the reservation comes back without counting a timeout.
func TestClosedBackendsSessionsEndWhenItsLeaseRunsOut(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	ctx := testCtx(t)
	survivor, doomed := newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
	s := backend.SessionID("doomed-gateway.1")
	require.NoError(t, doomed.BeginSession(ctx, s, backend.SessionInfo{}))
	id, err := doomed.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Hour, Body: []byte("x")})
	require.NoError(t, err)
	_, err = doomed.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
	require.NoError(t, err)

	require.NoError(t, doomed.Close())
	st, err := survivor.JobStats(ctx, id)
	require.NoError(t, err)
	require.Equal(t, backend.Reserved, st.State, "Close must not end sessions")

	require.Eventually(t, func() bool {
		st, err := survivor.JobStats(ctx, id)
		return err == nil && st.State == backend.Ready
	}, 5*time.Second, 50*time.Millisecond, "the dead gateway's reservation did not come back")
	st, err = survivor.JobStats(ctx, id)
	require.NoError(t, err)
	require.Zero(t, st.Timeouts)
	ts, err := survivor.TubeStats(ctx, "default")
	require.NoError(t, err)
	require.Zero(t, ts.Using, "the dead session's tube references are dropped")
}
