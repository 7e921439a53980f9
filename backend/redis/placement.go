package redis

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// Placement of the spread layout (docs/redis-cluster.md): a namespace's jobs live in
// spreadBuckets buckets, bucket b's keys under the hash tag {prefix:b}; each tube's shards are
// given buckets once, recorded in the namespace's home slot, so that the tubes spread evenly
// over the masters and a tube's shards sit on different masters where the cluster has them.

// clusterSlots is how many hash slots a Redis Cluster has.
const clusterSlots = 16384

// bucketBase is bucket b's key base, "{prefix:b}": what today's scripts take as ARGV[1].
func bucketBase(prefix string, b int) string { return "{" + bucketTag(prefix, b) + "}" }

func bucketTag(prefix string, b int) string { return prefix + ":" + strconv.Itoa(b) }

// bucketSlot is the hash slot of bucket b's keys.
func bucketSlot(prefix string, b int) int { return int(crc16(bucketTag(prefix, b)) % clusterSlots) }

// keySlot is the hash slot Redis Cluster gives key: CRC16 of its hash tag (the text between the
// first '{' and the first '}' after it, if not empty), else of the whole key.
func keySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return int(crc16(key) % clusterSlots)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the checksum of Redis Cluster's key
// hashing.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// bucketMasters is the master of every bucket of prefix, by bucket, as masterOf (the cluster's
// slot map) names the master of a slot.
func bucketMasters(prefix string, masterOf func(slot int) string) []string {
	out := make([]string, spreadBuckets)
	for b := range out {
		out[b] = masterOf(bucketSlot(prefix, b))
	}
	return out
}

// chooseBuckets gives tube's shards from len(placed) to shards−1 a bucket each, after those
// already placed (a tube's shards never move; more may be added). Each new shard goes to the
// master with the fewest shards of any tube (load, counted per master and updated here) among
// those holding no shard of this tube yet (any master once all hold one), and there to the
// bucket with the highest rendezvous score of (tube, shard, bucket): a choice made from the
// tube's name, the same on every gateway that sees the same slot map and load. Ties between
// masters go to the one whose best bucket scores highest.
func chooseBuckets(tube string, shards int, placed []int, masters []string, load map[string]int) []int {
	out := slices.Clone(placed)
	for k := len(placed); k < shards; k++ {
		used := map[string]bool{}
		for _, b := range out {
			used[masters[b]] = true
		}
		best := map[string]int{} // per master: its bucket with the highest score
		score := func(b int) uint64 { return rendezvous(tube, k, b) }
		for b, m := range masters {
			if slices.Contains(out, b) {
				continue
			}
			if cur, ok := best[m]; !ok || score(b) > score(cur) {
				best[m] = b
			}
		}
		allUsed := true
		for m := range best {
			allUsed = allUsed && used[m]
		}
		pick, pickMaster := -1, ""
		for m, b := range best {
			if used[m] && !allUsed {
				continue
			}
			if pick < 0 || load[m] < load[pickMaster] || (load[m] == load[pickMaster] && score(b) > score(pick)) {
				pick, pickMaster = b, m
			}
		}
		if pick < 0 {
			break // every bucket holds a shard of this tube already
		}
		out = append(out, pick)
		load[pickMaster]++
	}
	return out
}

// rendezvous is the score of bucket b for shard k of tube: FNV-1a of them, mixed by
// splitmix64's finalizer (FNV-1a alone barely mixes its last bytes into the high bits, so the
// highest score would fall on the same few buckets for every tube).
func rendezvous(tube string, k, b int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tube))
	_, _ = h.Write([]byte{0, byte(k >> 8), byte(k), byte(b >> 8), byte(b)})
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// placementRecord is a tube's record in the home slot's placement hash: its shards' buckets and
// the record's generation ("b0 b1 …;g"), which a tube dropped from its buckets and placed again
// meanwhile has raised (see the tube lifecycle in docs/redis-cluster.md).
type placementRecord struct {
	Buckets []int
	Gen     uint64
}

func (r placementRecord) String() string {
	parts := make([]string, len(r.Buckets))
	for i, b := range r.Buckets {
		parts[i] = strconv.Itoa(b)
	}
	return strings.Join(parts, " ") + ";" + strconv.FormatUint(r.Gen, 10)
}

// parsePlacementRecord reads a record String wrote: at least one bucket, each in range and
// named once.
func parsePlacementRecord(s string) (placementRecord, error) {
	list, gen, ok := strings.Cut(s, ";")
	if !ok {
		return placementRecord{}, fmt.Errorf("placement record %q: no generation", s)
	}
	var r placementRecord
	var err error
	if r.Gen, err = strconv.ParseUint(gen, 10, 64); err != nil {
		return placementRecord{}, fmt.Errorf("placement record %q: generation: %w", s, err)
	}
	for _, f := range strings.Fields(list) {
		b, err := strconv.Atoi(f)
		if err != nil || b < 0 || b >= spreadBuckets || slices.Contains(r.Buckets, b) {
			return placementRecord{}, fmt.Errorf("placement record %q: bad or repeated bucket %q", s, f)
		}
		r.Buckets = append(r.Buckets, b)
	}
	if len(r.Buckets) == 0 {
		return placementRecord{}, errors.New("placement record: no bucket")
	}
	return r, nil
}
