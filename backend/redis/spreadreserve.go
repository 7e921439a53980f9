package redis

// A reserve whose watch list spans several buckets of the spread layout (docs/redis-cluster.md)
// reads every bucket's best ready job in one fan-out, then claims in the bucket of the best one
// with a bound: the best of the other buckets' heads. The claim (in one bucket, atomic there)
// takes that bucket's best ready job if it is no worse than the bound, else reports the
// bucket's best now, and the plan moves on. So a claim never takes a job worse than one another
// bucket showed, and the job reserved is no worse than any job that was ready when the reserve
// began and still was when it claimed.

// maxLostClaims is how many claims a reserve may lose to other workers before it reads every
// bucket again: each lost claim knows only its own bucket's news.
const maxLostClaims = 3

// readyHead is the best ready job of one bucket of a watch list.
type readyHead struct {
	Bucket int
	Pri    uint32
	ID     uint64
}

// before is beanstalk's order: priority, then id.
func (h readyHead) before(o readyHead) bool {
	return h.Pri < o.Pri || (h.Pri == o.Pri && h.ID < o.ID)
}

// claimPlan is where a reserve claims next, from the heads of a fan-out and the news of the
// claims it lost since.
type claimPlan struct {
	heads map[int]readyHead // the buckets with a ready job
	lost  int
}

// newClaimPlan starts from one fan-out's heads (only the buckets that had a ready job).
func newClaimPlan(heads []readyHead) *claimPlan {
	p := &claimPlan{heads: make(map[int]readyHead, len(heads))}
	for _, h := range heads {
		p.heads[h.Bucket] = h
	}
	return p
}

// next is the bucket to claim in, the best head, and the bound its claim may not pass: the
// best head of every other bucket (bounded false when no other bucket has one). ok is false
// when no bucket has a ready job.
func (p *claimPlan) next() (best, bound readyHead, bounded, ok bool) {
	for _, h := range p.heads {
		switch {
		case !ok:
			best, ok = h, true
		case h.before(best):
			bound, bounded = best, true
			best = h
		case !bounded || h.before(bound):
			bound, bounded = h, true
		}
	}
	return best, bound, bounded, ok
}

// lostClaim records a claim in bucket that found its best ready job worse than the bound (head,
// has) or none (has false). It reports whether the reserve should read every bucket again.
func (p *claimPlan) lostClaim(bucket int, head readyHead, has bool) (startOver bool) {
	if has {
		p.heads[bucket] = head
	} else {
		delete(p.heads, bucket)
	}
	p.lost++
	return p.lost >= maxLostClaims
}
