package postgres

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// An operator sees in the log what the store did on its own: each migration applied (once, by
// the gateway that applied it) and the sessions of a dead gateway ended, with counts.
func TestLogsMigrationsAndReapedSessions(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	require.NoError(t, err)
	schema := testSchema(t)
	ctx := testCtx(t)
	open := func(log *gatewaytest.SyncBuffer) *Backend {
		opts := testOptions(schema, nil)
		opts.Logger = slog.New(slog.NewTextHandler(log, nil))
		b, err := New(ctx, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	var firstLog, secondLog gatewaytest.SyncBuffer
	open(&firstLog) // the survivor, which reaps
	doomed := open(&secondLog)
	require.Equal(t, len(ms), strings.Count(firstLog.String(), "postgres: migration applied"), firstLog.String())
	require.Contains(t, firstLog.String(), "migration="+ms[0].name)
	require.NotContains(t, secondLog.String(), "migration applied", "an up-to-date schema applies nothing")

	s := backend.SessionID("doomed-gateway.1")
	require.NoError(t, doomed.BeginSession(ctx, s, backend.SessionInfo{}))
	_, err = doomed.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Hour, Body: []byte("secret body")})
	require.NoError(t, err)
	_, err = doomed.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}})
	require.NoError(t, err)
	require.NoError(t, doomed.Close())

	require.Eventually(t, func() bool {
		return strings.Contains(firstLog.String(), "postgres: ended sessions of dead gateways")
	}, 5*time.Second, 50*time.Millisecond, "reaping is not logged:\n%s", firstLog.String())
	require.Contains(t, firstLog.String(), "gateways=1 sessions=1")
	require.NotContains(t, firstLog.String(), "secret body")
}
