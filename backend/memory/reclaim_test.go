package memory

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// One collection runs when the bodies held fall to a quarter of a large peak, and none for a
// small queue or while the queue is still full.
func TestReclaimAfterABurstDrains(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name        string
		put, delete int // bodies of 1 MiB
		collections int32
	}{
		{"a small queue drained: the runtime's pacing is left alone", reclaimMinPeak/mib - 1, reclaimMinPeak/mib - 1, 0},
		{"a large queue half drained: nothing yet", 40, 20, 0},
		{"a large queue drained to a quarter: one collection", 40, 30, 1},
		{"drained completely: still one (the peak restarts from what is left)", 40, 40, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			be := New(Options{})
			defer be.Close()
			var collections atomic.Int32
			be.reclaim.collect = func() { collections.Add(1) }
			body := make([]byte, mib)
			ids := make([]uint64, tt.put)
			for i := range ids {
				id, err := be.Put(ctx, backend.PutParams{Tube: backend.DefaultTube, TTR: time.Minute, Body: body})
				require.NoError(t, err)
				ids[i] = id
			}
			for _, id := range ids[:tt.delete] {
				require.NoError(t, be.Delete(ctx, "", id))
			}
			require.Eventually(t, be.reclaim.idle, 10*time.Second, time.Millisecond)
			require.Equal(t, tt.collections, collections.Load())
		})
	}
}

// A drain that goes on while a collection runs gets one more collection after it, so the
// bodies deleted meanwhile do not stay in the heap.
func TestReclaimCollectsAgainAfterADrainThatOutranTheCollection(t *testing.T) {
	const mib = 1 << 20
	ctx := context.Background()
	be := New(Options{})
	defer be.Close()
	var collections atomic.Int32
	release := make(chan struct{})
	be.reclaim.collect = func() {
		collections.Add(1)
		<-release
	}
	body := make([]byte, mib)
	ids := make([]uint64, 160)
	for i := range ids {
		id, err := be.Put(ctx, backend.PutParams{Tube: backend.DefaultTube, TTR: time.Minute, Body: body})
		require.NoError(t, err)
		ids[i] = id
	}
	for _, id := range ids[:120] { // a quarter left: the first collection starts, and waits
		require.NoError(t, be.Delete(ctx, "", id))
	}
	require.Eventually(t, func() bool { return collections.Load() == 1 }, 10*time.Second, time.Millisecond)
	for _, id := range ids[120:] { // drained while it runs
		require.NoError(t, be.Delete(ctx, "", id))
	}
	close(release)
	require.Eventually(t, be.reclaim.idle, 10*time.Second, time.Millisecond)
	require.Equal(t, int32(2), collections.Load())
}

// idle reports whether no collection is under way.
func (r *reclaimer) idle() bool {
	r.lock.Lock()
	defer r.lock.Unlock()
	return !r.running
}
