package binlog

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIDListWalksWhatWasAdded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ids       []uint64
		bytesEach int // at most, on average
	}{
		{"none", nil, 0},
		{"in a row", []uint64{1, 2, 3, 4, 5, 6, 7, 8}, 1},
		{"backwards and far", []uint64{1 << 40, 3, math.MaxUint64, 0, 77, 1 << 63}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l idList
			for _, id := range tc.ids {
				l.add(id)
			}
			require.LessOrEqual(t, len(l.buf), tc.bytesEach*len(tc.ids))
			var got []uint64
			for id, ok := l.next(); ok; id, ok = l.next() {
				got = append(got, id)
			}
			require.Equal(t, tc.ids, got)
		})
	}
}
