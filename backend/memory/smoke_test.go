package memory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// TestPutReserveDeleteWithTheSystemClock checks the plain path with the real clock, which the
// shared suite (fake clock only) does not use.
func TestPutReserveDeleteWithTheSystemClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := New(Options{})
	t.Cleanup(func() { _ = b.Close() })
	require.NoError(t, b.BeginSession(ctx, "p.1", backend.SessionInfo{}))
	id, err := b.Put(ctx, backend.PutParams{Tube: "default", Priority: 1, Delay: 20 * time.Millisecond, TTR: time.Second, Body: []byte("x")})
	require.NoError(t, err)
	j, err := b.Reserve(ctx, backend.ReserveParams{Session: "p.1", Tubes: []string{"default"}, Timeout: 2 * time.Second})
	require.NoError(t, err)
	require.Equal(t, id, j.ID)
	require.NoError(t, b.Delete(ctx, "p.1", id))
	require.NoError(t, b.EndSession(ctx, "p.1"))
}

func TestCallsAfterCloseFail(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	require.NoError(t, b.Close())
	_, err := b.Stats(context.Background())
	require.ErrorIs(t, err, ErrClosed)
}
