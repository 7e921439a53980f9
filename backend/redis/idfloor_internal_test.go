package redis

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// The store's id sequence is raised to a Backend's floor (the highest id it has handed out) by
// each of its puts and by restore, and never lowered: here the sequence is behind because the
// namespace is new, as it is behind after Redis lost data.
func TestPutAndRestoreRaiseTheIDSequenceToTheFloor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := newPrefix(t)
	a, b := newTestBackend(t, prefix, nil, 0), newTestBackend(t, prefix, nil, 0)
	put := func(via *Backend) uint64 {
		t.Helper()
		id, err := via.Put(ctx, backend.PutParams{Tube: backend.DefaultTube, TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		return id
	}

	a.saw(41)
	require.Equal(t, uint64(42), put(a), "a put carries its Backend's floor")
	b.saw(100)
	require.NoError(t, b.restore(ctx))
	require.Equal(t, uint64(101), put(a), "restore raised the sequence to b's floor")
	require.Equal(t, uint64(101), a.floor.Load(), "a saw the id it handed out")
	require.NoError(t, b.restore(ctx))
	require.Equal(t, uint64(102), put(b), "a floor below the sequence changes nothing")
}
