package redis

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/internal/faulttest"
)

func TestKeySlotFollowsHashTags(t *testing.T) {
	require.Equal(t, uint16(0x31C3), crc16("123456789"), "CRC-16/XMODEM's check value")
	tests := []struct {
		key, hashed string // key is hashed as hashed is
	}{
		{"{user1000}.following", "user1000"},
		{"foo{bar}{zap}", "bar"},     // the first tag only
		{"foo{{bar}}zap", "{bar"},    // from the first '{' to the first '}' after it
		{"foo{}{bar}", "foo{}{bar}"}, // an empty tag: the whole key
		{"foo{bar", "foo{bar"},       // no closing brace: the whole key
		{"{beangate:17}:j:1", "beangate:17"},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		require.Equal(t, int(crc16(tt.hashed)%clusterSlots), keySlot(tt.key), tt.key)
	}
	require.Equal(t, bucketSlot("jobs", 17), keySlot(bucketBase("jobs", 17)+":t:default:ready"))
}

// The slots computed here are the ones a real cluster gives the keys.
func TestKeySlotAgreesWithRedisCluster(t *testing.T) {
	c := faulttest.StartRedisCluster(t, 3, 0)
	n := c.Node(0)
	defer n.Close()
	ctx := context.Background()
	keys := []string{"", "a", "foo{}{bar}", "foo{{bar}}zap", "{user1000}.followers", "héllo{wörld}"}
	for b := 0; b < spreadBuckets; b += 7 {
		keys = append(keys, bucketBase("beangate", b)+":ids", fmt.Sprintf("key-%d", b))
	}
	for _, k := range keys {
		want, err := n.ClusterKeySlot(ctx, k).Result()
		require.NoError(t, err)
		require.Equal(t, int(want), keySlot(k), "%q", k)
	}
}

// threeMasters is the slot map redis-cli --cluster create makes of three masters.
func threeMasters(slot int) string {
	switch {
	case slot <= 5460:
		return "m1"
	case slot <= 10922:
		return "m2"
	}
	return "m3"
}

func TestChooseBucketsSpreadsTubesAndShards(t *testing.T) {
	one := func(int) string { return "m1" }
	tests := []struct {
		name     string
		masterOf func(int) string
		tubes    []string
		shards   int
		// want: shards per master over all tubes, and per tube how many masters its shards span
		wantLoad    map[string]int
		wantSpanned int
	}{
		{"six tubes on three masters: two each", threeMasters, []string{"a", "b", "c", "d", "e", "f"}, 1,
			map[string]int{"m1": 2, "m2": 2, "m3": 2}, 1},
		{"a tube of three shards: one on each", threeMasters, []string{"hot"}, 3,
			map[string]int{"m1": 1, "m2": 1, "m3": 1}, 3},
		{"six tubes of three shards", threeMasters, []string{"a", "b", "c", "d", "e", "f"}, 3,
			map[string]int{"m1": 6, "m2": 6, "m3": 6}, 3},
		{"four shards on three masters: every master, one twice", threeMasters, []string{"hot"}, 4,
			map[string]int{"m1": 2, "m2": 1, "m3": 1}, 3},
		{"one master takes all", one, []string{"a", "b"}, 2, map[string]int{"m1": 4}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			masters := bucketMasters("jobs", tt.masterOf)
			load := map[string]int{}
			for _, tube := range tt.tubes {
				got := chooseBuckets(tube, tt.shards, nil, masters, load)
				require.Len(t, got, tt.shards)
				spanned := map[string]bool{}
				for i, b := range got {
					require.NotContains(t, got[:i], b, "a tube's shards have buckets of their own")
					spanned[masters[b]] = true
				}
				require.Len(t, spanned, tt.wantSpanned, tube)
			}
			if tt.name == "four shards on three masters: every master, one twice" {
				// Which master gets two depends on the name's scores; the counts do not.
				counts := []int{load["m1"], load["m2"], load["m3"]}
				slices.Sort(counts)
				require.Equal(t, []int{1, 1, 2}, counts)
				return
			}
			require.Equal(t, tt.wantLoad, load)
		})
	}
}

// The rule of different masters comes before load: the least loaded master gets one shard of a
// tube, not all.
func TestChooseBucketsPutsShardsOnDifferentMastersFirst(t *testing.T) {
	masters := bucketMasters("jobs", threeMasters)
	load := map[string]int{"m1": 0, "m2": 5, "m3": 7}
	got := chooseBuckets("hot", 3, nil, masters, load)
	require.Equal(t, []string{"m1", "m2", "m3"}, []string{masters[got[0]], masters[got[1]], masters[got[2]]},
		"the least loaded first, then the next")
	require.Equal(t, map[string]int{"m1": 1, "m2": 6, "m3": 8}, load)
}

func TestChooseBucketsIsStableAndKeepsPlacedShards(t *testing.T) {
	masters := bucketMasters("jobs", threeMasters)
	first := chooseBuckets("emails", 1, nil, masters, map[string]int{})
	require.Equal(t, first, chooseBuckets("emails", 1, nil, masters, map[string]int{}), "the same on every gateway")
	require.NotEqual(t, first, chooseBuckets("reports", 1, nil, masters, map[string]int{}), "chosen from the name")

	grown := chooseBuckets("emails", 3, first, masters, map[string]int{masters[first[0]]: 1})
	require.Equal(t, first[0], grown[0], "a placed shard never moves")
	require.Len(t, grown, 3)
	require.Len(t, map[string]bool{masters[grown[0]]: true, masters[grown[1]]: true, masters[grown[2]]: true}, 3)
	require.Equal(t, grown, chooseBuckets("emails", 3, grown, masters, map[string]int{}), "nothing to add")
}

func TestPlacementRecordRoundTrip(t *testing.T) {
	tests := []struct {
		text    string
		want    placementRecord
		wantErr bool
	}{
		{"17;0", placementRecord{Buckets: []int{17}, Gen: 0}, false},
		{"3 1023 0;42", placementRecord{Buckets: []int{3, 1023, 0}, Gen: 42}, false},
		{"17", placementRecord{}, true},     // no generation
		{";1", placementRecord{}, true},     // no bucket
		{"1024;1", placementRecord{}, true}, // out of range
		{"-1;1", placementRecord{}, true},   //
		{"5 5;1", placementRecord{}, true},  // repeated
		{"5 x;1", placementRecord{}, true},  //
		{"5;-1", placementRecord{}, true},   // bad generation
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := parsePlacementRecord(tt.text)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.text, got.String())
		})
	}
}
