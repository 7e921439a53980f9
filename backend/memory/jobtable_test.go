package memory

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table against a Go map through random puts, replacements and deletes, with ids dense (as
// a server hands them out) and sparse (survivors of a drained queue), through splits.
func TestJobTableMatchesMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ids   func(r *rand.Rand) uint64
		steps int
	}{
		{"dense", func(r *rand.Rand) uint64 { return 1 + r.Uint64N(20000) }, 100000},
		{"sparse", func(r *rand.Rand) uint64 { return r.Uint64() }, 100000},
		{"strided", func(r *rand.Rand) uint64 { return 4096 * (1 + r.Uint64N(10000)) }, 50000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var table jobTable
			want := map[uint64]*job{}
			for step := range tc.steps {
				id := tc.ids(r)
				if r.IntN(3) == 0 {
					table.Delete(id)
					delete(want, id)
				} else {
					j := &job{id: id}
					table.Put(j)
					want[id] = j
				}
				if step%997 == 0 {
					require.Equal(t, len(want), table.Len())
					for id, j := range want {
						require.Same(t, j, table.Get(id), "id %d", id)
					}
				}
				require.Equal(t, want[id], table.Get(id))
			}
			for id := range want {
				table.Delete(id)
				require.Nil(t, table.Get(id))
			}
			require.Zero(t, table.Len())
		})
	}
}
