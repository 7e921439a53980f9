package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
)

// The commands of the spread layout (docs/redis-cluster.md): a tube's commands go to its
// shards' buckets, a job's to the bucket its id names (id mod 1024), namespace-wide ones to
// every bucket in use, each bucket's part being today's script under the bucket's base.

// putShards is how many of tube's shards take puts (its record may hold more, which drain).
func (b *Backend) putShards(tube string, r placementRecord) int {
	return max(1, min(len(r.Buckets), b.shardsOf(tube)))
}

func (b *Backend) spreadPut(ctx context.Context, p backend.PutParams) (uint64, error) {
	r, _, err := b.placement(ctx, p.Tube, true)
	if err != nil {
		return 0, opErr(string(opPut), err)
	}
	bk, sess := r.Buckets[0], string(p.Session)
	if n := b.putShards(p.Tube, r); n > 1 {
		// Round robin over the shards; the session's used tube is recorded in the first one.
		if k := int(b.spread.next.Add(1) % uint64(n)); k != 0 {
			bk, sess = r.Buckets[k], ""
		}
	}
	if sess != "" {
		if err := b.enter(ctx, p.Session, bk); err != nil {
			return 0, err
		}
	}
	res, err := b.callIn(ctx, bk, opPut, p.Tube, prio(p.Priority), ms(p.Delay), ms(p.TTR), p.Body,
		b.floorArg(), sess, strconv.Itoa(bk))
	if err != nil {
		return 0, err
	}
	id, err := toInt(opPut, res)
	if err != nil {
		return 0, err
	}
	b.saw(uint64(id))
	return uint64(id), nil
}

// jobBucket is the bucket of job id.
func jobBucket(id uint64) int { return idBucket(id) }

// spreadReserveJob reserves job id for s in its bucket.
func (b *Backend) spreadReserveJob(ctx context.Context, s backend.SessionID, id uint64) (*backend.Job, error) {
	bk := jobBucket(id)
	if err := b.enter(ctx, s, bk); err != nil {
		return nil, err
	}
	res, err := b.callIn(ctx, bk, opReserveJob, string(s), padID(id))
	if jobMissing(res, err) {
		// An imported id: its job is where its forwarding entry says (spread_import.go).
		if to, ok, ferr := b.forwarded(ctx, id); ferr != nil {
			return nil, ferr
		} else if ok {
			if err := b.enter(ctx, s, to); err != nil {
				return nil, err
			}
			bk = to
			res, err = b.callIn(ctx, bk, opReserveJob, string(s), padID(id))
		}
	}
	if err != nil {
		return nil, err
	}
	b.reservedIn(s, bk)
	return b.sawJob(newReply(opReserveJob, res).job(0))
}

// reservedIn records that s holds a reservation in bucket, where a reserve looks for its
// DEADLINE_SOON.
func (b *Backend) reservedIn(s backend.SessionID, bucket int) {
	sp := b.spread
	sp.mu.Lock()
	sp.session(s).res[bucket] = true
	sp.mu.Unlock()
}

// spreadKick kicks tube's shards one by one until bound jobs are kicked.
func (b *Backend) spreadKick(ctx context.Context, tube string, bound uint64) (uint64, error) {
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil || !ok {
		return 0, err
	}
	b.waiters.beginHandOut() // the kick's publish may come before its reply
	defer b.waiters.endHandOut()
	var total uint64
	var first []handed
	for _, bk := range r.Buckets {
		if total >= bound {
			break
		}
		res, err := b.callIn(ctx, bk, opKick, tube, strconv.FormatUint(bound-total, 10))
		if err != nil {
			return 0, err
		}
		rp := newReply(opKick, res)
		n := rp.int(0)
		for i := 1; i < len(rp.a); i++ {
			first = append(first, handed{rp.str(i), tube})
		}
		if rp.err != nil {
			return 0, rp.err
		}
		total += uint64(n)
	}
	b.waiters.handOut(first)
	return total, nil
}

// spreadPause pauses every shard of tube: a reserve reads the pause per bucket.
func (b *Backend) spreadPause(ctx context.Context, tube string, d time.Duration) error {
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil {
		return err
	}
	if !ok {
		return backend.ErrNotFound
	}
	found := false
	for _, rep := range b.fanOut(ctx, r.Buckets, opPause, func(int) []any { return []any{tube, ms(d)} }) {
		if rep.err != nil {
			return rep.err
		}
		if n, err := toInt(opPause, rep.res); err != nil {
			return err
		} else if n == 1 {
			found = true
		}
	}
	if !found {
		return backend.ErrNotFound
	}
	return nil
}

// spreadPeekState peeks every shard of tube and keeps what one slot would show first: the
// ready job of the lowest (priority, id); for delayed and buried jobs, whose order across
// shards no id tells, the lowest id.
func (b *Backend) spreadPeekState(ctx context.Context, tube, state string) (*backend.Job, error) {
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, backend.ErrNotFound
	}
	var best *backend.Job
	for _, rep := range b.fanOut(ctx, r.Buckets, opPeekState, func(int) []any { return []any{tube, state} }) {
		if errors.Is(rep.err, backend.ErrNotFound) {
			continue
		}
		if rep.err != nil {
			return nil, rep.err
		}
		j, err := newReply(opPeekState, rep.res).job(0)
		if err != nil {
			return nil, err
		}
		if best == nil || (state == "ready" && (j.Priority < best.Priority || (j.Priority == best.Priority && j.ID < best.ID))) ||
			(state != "ready" && j.ID < best.ID) {
			best = j
		}
	}
	if best == nil {
		return nil, backend.ErrNotFound
	}
	return b.sawJob(best, nil)
}

// spreadTubeStats sums tube's shards; using, watching, pauses and the pause are its first
// shard's, where sessions use and watch it (the others count only waiting reserves' watches).
func (b *Backend) spreadTubeStats(ctx context.Context, tube string) (*backend.TubeStats, error) {
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, backend.ErrNotFound
	}
	var ts *backend.TubeStats
	for i, rep := range b.fanOut(ctx, r.Buckets, opTubeStats, func(int) []any { return []any{tube} }) {
		if errors.Is(rep.err, backend.ErrNotFound) {
			continue
		}
		if rep.err != nil {
			return nil, rep.err
		}
		x := newReply(opTubeStats, rep.res)
		one := &backend.TubeStats{
			Name: tube, UrgentJobs: uint64(x.int(0)), ReadyJobs: uint64(x.int(1)),
			ReservedJobs: uint64(x.int(2)), DelayedJobs: uint64(x.int(3)), BuriedJobs: uint64(x.int(4)),
			TotalJobs: uint64(x.int(5)), Using: uint64(x.int(6)), Watching: uint64(x.int(7)),
			CmdDelete: uint64(x.int(8)), CmdPauseTube: uint64(x.int(9)),
			Pause: x.dur(10), PauseTimeLeft: max(x.dur(11), 0),
		}
		if x.err != nil {
			return nil, x.err
		}
		if i > 0 {
			one.Using, one.Watching = 0, 0
		}
		if ts == nil {
			ts = one
			continue
		}
		ts.UrgentJobs += one.UrgentJobs
		ts.ReadyJobs += one.ReadyJobs
		ts.ReservedJobs += one.ReservedJobs
		ts.DelayedJobs += one.DelayedJobs
		ts.BuriedJobs += one.BuriedJobs
		ts.TotalJobs += one.TotalJobs
		ts.CmdDelete += one.CmdDelete
		ts.Using += one.Using
		ts.Watching += one.Watching
		if i == 0 {
			ts.CmdPauseTube, ts.Pause, ts.PauseTimeLeft = one.CmdPauseTube, one.Pause, one.PauseTimeLeft
		}
	}
	if ts == nil {
		return nil, backend.ErrNotFound
	}
	return ts, nil
}

// spreadListTubes is every tube existing in a bucket in use, each once.
func (b *Backend) spreadListTubes(ctx context.Context) ([]string, error) {
	if err := b.loadPlacements(ctx); err != nil { // other gateways' tubes too
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, rep := range b.fanOut(ctx, b.spread.usedBuckets(), opListTubes, func(int) []any { return nil }) {
		if rep.err != nil {
			return nil, rep.err
		}
		x := newReply(opListTubes, rep.res)
		for i := range x.a {
			if n := x.str(i); !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		if x.err != nil {
			return nil, x.err
		}
	}
	return names, nil
}

// spreadStats sums every bucket in use; current-tubes counts each tube once.
func (b *Backend) spreadStats(ctx context.Context) (*backend.Stats, error) {
	names, err := b.spreadListTubes(ctx)
	if err != nil {
		return nil, err
	}
	s := &backend.Stats{Tubes: uint64(len(names))}
	for _, rep := range b.fanOut(ctx, b.spread.usedBuckets(), opStats, func(int) []any { return nil }) {
		if rep.err != nil {
			return nil, rep.err
		}
		x := newReply(opStats, rep.res)
		s.UrgentJobs += uint64(x.int(0))
		s.ReadyJobs += uint64(x.int(1))
		s.ReservedJobs += uint64(x.int(2))
		s.DelayedJobs += uint64(x.int(3))
		s.BuriedJobs += uint64(x.int(4))
		s.TotalJobs += uint64(x.int(5))
		s.JobTimeouts += uint64(x.int(6))
		if x.err != nil {
			return nil, x.err
		}
	}
	return s, nil
}

// spreadReadyAges asks each bucket about its tubes.
func (b *Backend) spreadReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error) {
	byBucket := map[int][]string{}
	var buckets []int
	for _, t := range tubes {
		r, ok, err := b.placement(ctx, t, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, bk := range r.Buckets {
			if _, ok := byBucket[bk]; !ok {
				buckets = append(buckets, bk)
			}
			byBucket[bk] = append(byBucket[bk], t)
		}
	}
	ages := map[string]time.Duration{}
	for _, rep := range b.fanOut(ctx, buckets, opReadyAges, func(bk int) []any {
		args := make([]any, len(byBucket[bk]))
		for i, t := range byBucket[bk] {
			args[i] = t
		}
		return args
	}) {
		if rep.err != nil {
			return nil, rep.err
		}
		x := newReply(opReadyAges, rep.res)
		for i, t := range byBucket[rep.bucket] {
			if v := x.int(i); v >= 0 {
				if d := time.Duration(v) * time.Millisecond; d > ages[t] {
					ages[t] = d
				}
			}
		}
		if x.err != nil {
			return nil, x.err
		}
	}
	return ages, nil
}

// tubeBucket is the one bucket of tube for an admin command that works within one slot: a
// sharded tube's shards cannot be listed or moved as one yet.
func (b *Backend) tubeBucket(ctx context.Context, tube string, what string) (int, bool, error) {
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil || !ok {
		return 0, ok, err
	}
	if len(r.Buckets) > 1 {
		return 0, false, opErr(what, fmt.Errorf("tube %q has %d shards: not supported in the spread layout yet", tube, len(r.Buckets)))
	}
	return r.Buckets[0], true, nil
}

// spreadMoveBuckets is the bucket of both tubes of a move, which must share one.
func (b *Backend) spreadMoveBucket(ctx context.Context, from, to string) (int, bool, error) {
	fb, ok, err := b.tubeBucket(ctx, from, string(opMoveJobs))
	if err != nil || !ok {
		return 0, ok, err
	}
	tr, _, err := b.placement(ctx, to, true)
	if err != nil {
		return 0, false, err
	}
	if !slices.Equal(tr.Buckets, []int{fb}) {
		return 0, false, opErr(string(opMoveJobs), fmt.Errorf("tubes %q and %q are in different buckets: moving jobs between them is not supported in the spread layout yet", from, to))
	}
	return fb, true, nil
}
