package redis

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpreadIDEncoding(t *testing.T) {
	tests := []struct {
		name    string
		seq     uint64
		bucket  int
		want    uint64
		wantErr bool
	}{
		{"first id of bucket 0", 1, 0, 1024, false},
		{"first id of the last bucket", 1, spreadBuckets - 1, 2047, false},
		{"a middle one", 12345, 678, 12345*1024 + 678, false},
		{"the last id", maxSpreadSeq, spreadBuckets - 1, maxSpreadID, false},
		{"sequence 0 is no id", 0, 5, 0, true},
		{"past 2^53", maxSpreadSeq + 1, 0, 0, true},
		{"negative bucket", 1, -1, 0, true},
		{"bucket out of range", 1, spreadBuckets, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := spreadID(tt.seq, tt.bucket)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, id)
			require.LessOrEqual(t, id, uint64(1<<53-1))
			require.Equal(t, tt.bucket, idBucket(id))
			require.Equal(t, tt.seq, idSeq(id))
		})
	}
}

func TestMinSeqIsTheLowestAboveTheFloor(t *testing.T) {
	tests := []struct {
		floor  uint64
		bucket int
		want   uint64
	}{
		{0, 0, 1},              // nothing handed out yet
		{0, 7, 1},              //
		{1024, 0, 2},           // 1024 = seq 1 of bucket 0: the next in bucket 0 is seq 2
		{1024, 1, 1},           // 1025 (seq 1, bucket 1) is above 1024
		{2047, 1023, 2},        // 2047 is seq 1 of bucket 1023 itself
		{5*1024 + 500, 499, 6}, // seq 5 would give 5619 < 5620
		{5*1024 + 500, 501, 5}, // seq 5 gives 5621 > 5620
		{maxSpreadID - 1, 1023, maxSpreadSeq},
	}
	for _, tt := range tests {
		got := minSeq(tt.floor, tt.bucket)
		require.Equal(t, tt.want, got, "floor %d bucket %d", tt.floor, tt.bucket)
		id := got*spreadBuckets + uint64(tt.bucket)
		require.Greater(t, id, tt.floor, "above the floor")
		if got > 1 {
			require.LessOrEqual(t, (got-1)*spreadBuckets+uint64(tt.bucket), tt.floor, "the lowest such")
		}
	}
}

// Gateways putting into random buckets, each bucket a sequence of its own (INCR) raised by the
// putting gateway's floor as put.lua does: every id is unique, each gateway's ids increase in
// the order it got them, and the sequences grow by at most one per put of the namespace.
func TestFloorRuleKeepsEachGatewaysIDsIncreasing(t *testing.T) {
	for _, tt := range []struct {
		name              string
		gateways, buckets int
		puts              int
	}{
		{"one gateway, six buckets", 1, 6, 5000},
		{"four gateways, six buckets", 4, 6, 20000},
		{"eight gateways, every bucket", 8, spreadBuckets, 20000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tt.gateways)))
			counters := make([]uint64, spreadBuckets) // each bucket's sequence
			floors := make([]uint64, tt.gateways)
			seen := map[uint64]bool{}
			var top uint64
			for range tt.puts {
				g, b := rng.IntN(tt.gateways), rng.IntN(tt.buckets)
				counters[b] = nextSeq(counters[b]+1, minSeq(floors[g], b)) // INCR, then the rule
				id, err := spreadID(counters[b], b)
				require.NoError(t, err)
				require.False(t, seen[id], "id %d given twice", id)
				seen[id] = true
				require.Greater(t, id, floors[g], "gateway %d's ids increase", g)
				floors[g] = id
				top = max(top, counters[b])
			}
			require.LessOrEqual(t, top, uint64(tt.puts), "a sequence grows by at most one per put")
		})
	}
}
