package redis

import "fmt"

// Job ids of the spread layout (docs/redis-cluster.md): id = seq × spreadBuckets + bucket, so
// the bucket (and with it the slot) of a job is id mod spreadBuckets, and a command naming an
// id goes to one slot. seq is the bucket's own sequence, raised to what the putting gateway's
// floor requires so that the ids one gateway hands out increase (minSeq). Ids stay below 2^53,
// JavaScript's largest exact integer, for clients that parse them as numbers.
const (
	spreadBuckets = 1024
	maxSpreadID   = 1<<53 - 1
	// maxSpreadSeq is the largest sequence whose every bucket's id is at most maxSpreadID.
	maxSpreadSeq = (maxSpreadID - (spreadBuckets - 1)) / spreadBuckets
)

// spreadID is the id of sequence seq in bucket; seq 0 is no id (a bucket's INCR starts at 1,
// and id 0 is not a beanstalk id), nor is a seq past maxSpreadSeq.
func spreadID(seq uint64, bucket int) (uint64, error) {
	if bucket < 0 || bucket >= spreadBuckets {
		return 0, fmt.Errorf("bucket %d out of 0..%d", bucket, spreadBuckets-1)
	}
	if seq == 0 || seq > maxSpreadSeq {
		return 0, fmt.Errorf("sequence %d out of 1..%d: the namespace's ids are used up", seq, uint64(maxSpreadSeq))
	}
	return seq*spreadBuckets + uint64(bucket), nil
}

// idBucket is the bucket an id names: where its job is, or for an imported id, where the
// forwarding entry to its job is.
func idBucket(id uint64) int { return int(id % spreadBuckets) }

// idSeq is the sequence part of an id.
func idSeq(id uint64) uint64 { return id / spreadBuckets }

// minSeq is the lowest sequence a put in bucket may take so that its id is above floor, the
// highest id the putting gateway has handed out: the put's script takes the larger of this and
// the bucket's INCR, and sets the sequence to it. So one gateway's ids increase in the order it
// acknowledges puts, whatever bucket each goes to.
func minSeq(floor uint64, bucket int) uint64 {
	b := uint64(bucket)
	if floor < b {
		return 1
	}
	return (floor-b)/spreadBuckets + 1
}

// nextSeq is what a put's script does with the bucket's INCR result: at least minSeq (see
// there). It mirrors lua/put.lua's rule, for the tests of that rule.
func nextSeq(incr, min uint64) uint64 { return max(incr, min) }
