package memory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// The shared suite checks only the set of names; the memory engine also keeps beanstalkd's
// order: insertion order, a removal moving the last tube into the freed slot (spec §4.4).
func TestListTubesMovesTheLastTubeIntoARemovedSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := New(Options{Clock: clocktest.NewFake(testEpoch)})
	t.Cleanup(func() { _ = b.Close() })
	require.NoError(t, b.BeginSession(ctx, "s.1", backend.SessionInfo{}))
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, b.WatchTube(ctx, "s.1", name))
	}
	steps := []struct {
		do   func() error
		want []string
	}{
		{func() error { return nil }, []string{"default", "a", "b", "c"}},
		{func() error { return b.IgnoreTube(ctx, "s.1", "a") }, []string{"default", "c", "b"}},
		{func() error { return b.WatchTube(ctx, "s.1", "a") }, []string{"default", "c", "b", "a"}},
	}
	for _, s := range steps {
		require.NoError(t, s.do())
		names, err := b.ListTubes(ctx)
		require.NoError(t, err)
		require.Equal(t, s.want, names)
	}
}
