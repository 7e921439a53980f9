package redis

import (
	"context"
	"strconv"

	"github.com/beangate/beangate/backend"
)

// A reserve of the spread layout (docs/redis-cluster.md). A watch list within one bucket, the
// session holding no reservation elsewhere, is today's reserve in that bucket: one call. A
// watch list over several buckets reads every bucket's best ready job in one fan-out
// (reserve_spread, heads only), then claims in the bucket of the best one, bounded by the best
// of the others (claimPlan, spreadreserve.go), so that the job reserved is the lowest
// (priority, id) of the jobs ready across the buckets. The buckets where the session holds
// reservations join the fan-out, for its DEADLINE_SOON.

// maxSpreadRounds bounds the fan-outs of one try: each lost claim round means other workers
// took the jobs seen; the reserve then tries again as after a wake-up.
const maxSpreadRounds = 4

// watchBuckets groups the watched tubes by bucket (a sharded tube in each of its shards), in
// the order first seen.
func (b *Backend) watchBuckets(ctx context.Context, tubes []string) (map[int][]string, []int, error) {
	groups := map[int][]string{}
	var order []int
	for _, t := range tubes {
		r, _, err := b.placement(ctx, t, true)
		if err != nil {
			return nil, nil, err
		}
		for _, bk := range r.Buckets {
			if _, ok := groups[bk]; !ok {
				order = append(order, bk)
			}
			groups[bk] = append(groups[bk], t)
		}
	}
	return groups, order, nil
}

func (b *Backend) trySpreadReserve(ctx context.Context, p backend.ReserveParams, uncount, count bool) (reserveOutcome, error) {
	groups, order, err := b.watchBuckets(ctx, p.Tubes)
	if err != nil {
		return reserveOutcome{}, err
	}
	sp := b.spread
	sp.mu.Lock()
	all := order
	for bk := range sp.session(p.Session).res {
		if _, ok := groups[bk]; !ok {
			all = append(all, bk)
		}
	}
	sp.mu.Unlock()
	for _, bk := range all {
		if err := b.enter(ctx, p.Session, bk); err != nil {
			return reserveOutcome{}, err
		}
	}
	if count {
		if err := sp.wakeups.subscribe(ctx, order); err != nil {
			return reserveOutcome{}, opErr(string(opReserve), err)
		}
	}
	if len(all) == 1 {
		// (A count left in other buckets by an earlier try over several only costs needless
		// publishes there until the session's next try there, or its end.)
		out, err := b.tryReserveIn(ctx, sp.base(all[0]), p, groups[all[0]], uncount, count)
		if err == nil && out.job != nil {
			b.reservedIn(p.Session, all[0])
		}
		return out, err
	}
	mode := 1
	if count {
		mode += 2
	}
	var last reserveOutcome
	for range maxSpreadRounds {
		heads, out, err := b.spreadHeads(ctx, p, all, groups, mode)
		if err != nil || len(heads) == 0 {
			return out, err
		}
		last = out
		plan := newClaimPlan(heads)
		for {
			best, bound, bounded, ok := plan.next()
			if !ok {
				break
			}
			args := []any{string(p.Session), ms(backend.DeadlineSoonMargin), "0", "1", "", ""}
			if bounded {
				args[4], args[5] = strconv.FormatUint(uint64(bound.Pri), 10), padID(bound.ID)
			}
			for _, t := range groups[best.Bucket] {
				args = append(args, t)
			}
			res, err := b.callIn(ctx, best.Bucket, opReserveSpread, args...)
			if err != nil {
				return reserveOutcome{}, err
			}
			r := newReply(opReserveSpread, res)
			var startOver bool
			switch r.int(0) {
			case 1:
				j, err := b.sawJob(r.job(1))
				if err == nil {
					b.reservedIn(p.Session, best.Bucket)
				}
				return reserveOutcome{job: r.readyFor(j, 6), more: r.int(5) == 1 || len(plan.heads) > 1}, err
			case 3:
				startOver = plan.lostClaim(best.Bucket, readyHead{Bucket: best.Bucket, Pri: uint32(r.int(1)), ID: uint64(r.int(2))}, true)
			default:
				startOver = plan.lostClaim(best.Bucket, readyHead{}, false)
			}
			if r.err != nil {
				return reserveOutcome{}, r.err
			}
			if startOver {
				break
			}
		}
	}
	// Other workers kept taking the jobs seen: try again at once, as after a wake-up.
	return reserveOutcome{next: last.now / 1000, now: last.now, soonAt: -1, sent: last.sent}, nil
}

// spreadHeads reads the best ready job of every bucket of the reserve. With none anywhere it
// returns the reserve's outcome: DEADLINE_SOON if a bucket says so, else the earliest time the
// answer may change by itself.
func (b *Backend) spreadHeads(ctx context.Context, p backend.ReserveParams, buckets []int, groups map[int][]string, mode int) ([]readyHead, reserveOutcome, error) {
	reps := b.fanOut(ctx, buckets, opReserveSpread, func(bk int) []any {
		args := make([]any, 0, 6+len(groups[bk]))
		args = append(args, string(p.Session), ms(backend.DeadlineSoonMargin), strconv.Itoa(mode), "0", "", "")
		for _, t := range groups[bk] {
			args = append(args, t)
		}
		return args
	})
	var heads []readyHead
	out := reserveOutcome{next: -1, soonAt: -1}
	timed := false
	for _, rep := range reps {
		if rep.err != nil {
			return nil, reserveOutcome{}, rep.err
		}
		r := newReply(opReserveSpread, rep.res)
		if !timed {
			out.sent, timed = rep.sent, true
		}
		switch r.int(0) {
		case 3:
			heads = append(heads, readyHead{Bucket: rep.bucket, Pri: uint32(r.int(1)), ID: uint64(r.int(2))})
		case 2:
			out.soon = true
		case 0:
			out.now = r.int(2)
			if n := r.int(1); n >= 0 && (out.next < 0 || n < out.next) {
				out.next = n
			}
			if s := r.int(3); s >= 0 && (out.soonAt < 0 || s < out.soonAt) {
				out.soonAt = s
			}
		}
		if r.err != nil {
			return nil, reserveOutcome{}, r.err
		}
	}
	if len(heads) > 0 {
		return heads, reserveOutcome{now: out.now, sent: out.sent}, nil
	}
	if out.soon {
		return nil, reserveOutcome{soon: true}, nil
	}
	return nil, out, nil
}

// handedBucket is the bucket of a job handed to p's waiting reserve, if p watches a tube there.
func (b *Backend) handedBucket(ctx context.Context, p backend.ReserveParams, id string) (int, bool, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return 0, false, nil
	}
	bk := jobBucket(n)
	if err := b.enter(ctx, p.Session, bk); err != nil {
		return 0, false, err
	}
	return bk, true, nil
}
