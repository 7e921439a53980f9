package memory

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

type heapItem struct{ key, idx int }

func TestIndexedHeapPopsInOrderAfterRandomRemovals(t *testing.T) {
	t.Parallel()
	h := newIndexedHeap(func(a, b *heapItem) bool { return a.key < b.key },
		func(x *heapItem, i int) { x.idx = i })
	rng := rand.New(rand.NewPCG(1, 2))
	var live []*heapItem
	for range 500 {
		x := &heapItem{key: rng.IntN(100)}
		h.Push(x)
		live = append(live, x)
	}
	for range 200 { // remove random elements by their index
		k := rng.IntN(len(live))
		x := live[k]
		require.Same(t, x, h.Remove(x.idx))
		require.Equal(t, -1, x.idx)
		live = slices.Delete(live, k, k+1)
	}
	for _, x := range live[:50] { // change keys in place
		x.key = rng.IntN(100)
		h.Fix(x.idx)
	}
	var got []int
	for h.Len() > 0 {
		got = append(got, h.Pop().key)
	}
	require.Len(t, got, len(live))
	require.True(t, slices.IsSorted(got))
}
