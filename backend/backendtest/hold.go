package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// HoldReservation begins a session on b that puts a job in the default tube with an hour's TTR
// and reserves it, and returns both: a reservation that only the session's end (or its
// gateway's death) can return in a test's time. Failure and lease tests of the shared stores
// start from it.
func HoldReservation(t testing.TB, b backend.Backend) (backend.SessionID, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	s := backend.NewSessionIDs().Next()
	require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
	id, err := b.Put(ctx, backend.PutParams{Tube: backend.DefaultTube, TTR: time.Hour, Body: []byte("x")})
	require.NoError(t, err)
	r, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{backend.DefaultTube}})
	require.NoError(t, err)
	require.Equal(t, id, r.ID)
	return s, id
}
