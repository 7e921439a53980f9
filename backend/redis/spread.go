package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// spread is the state of the spread layout (docs/redis-cluster.md) a Backend keeps: the tubes'
// placement records it has read, the slot map it places by, and per session the buckets where
// the session has state. Nil for the one-slot layout.
type spread struct {
	prefix string
	home   string // "{prefix}", the home slot's base
	shards int    // Options.Shards

	wakeups bucketWakeups // spread_wakeups.go

	placeMu  sync.Mutex // one placement at a time here, so that each counts the one before
	mu       sync.Mutex
	place    map[string]placementRecord // tube → its record, as read from {prefix}:place
	loadedAt time.Time                  // when every record was last read
	masters  []string                   // bucket → its master's address, as of mapAt
	mapAt    time.Time
	sessions map[backend.SessionID]*spreadSession
	pb       map[string]map[int]bool // process → buckets recorded in {prefix}:pb:<process>
	used     map[int]bool            // every bucket some record names: stats, policies, sweeps

	next atomic.Uint64 // round robin of puts over a sharded tube's shards
}

// spreadSession is what a Backend knows of one of its sessions in the spread layout.
type spreadSession struct {
	use     string       // the used tube
	addr    string       // its client's address, copied into each bucket's session for the histories
	buckets map[int]bool // where the session has state: its ends go there
	res     map[int]bool // where it has reserved: a reserve's DEADLINE_SOON looks there
}

// masterMapTTL is how long a slot map read for placement is trusted: placement is rare, and a
// map a little old only makes a choice a little less even.
const masterMapTTL = 10 * time.Second

func newSpread(prefix string, shards int) *spread {
	return &spread{
		prefix: prefix, home: "{" + prefix + "}", shards: shards,
		place: map[string]placementRecord{}, sessions: map[backend.SessionID]*spreadSession{},
		pb: map[string]map[int]bool{}, used: map[int]bool{},
	}
}

func (sp *spread) base(bucket int) string { return bucketBase(sp.prefix, bucket) }

func (sp *spread) placeKey() string { return sp.home + ":place" }

// session is s's record, made on first use.
func (sp *spread) session(s backend.SessionID) *spreadSession {
	ss := sp.sessions[s]
	if ss == nil {
		ss = &spreadSession{buckets: map[int]bool{}, res: map[int]bool{}}
		sp.sessions[s] = ss
	}
	return ss
}

// loadPlacements reads every placement record (at start, and when a record is needed that
// this Backend lacks: it also tells the load per master).
func (b *Backend) loadPlacements(ctx context.Context) error {
	sp := b.spread
	all, err := b.client.HGetAll(ctx, sp.placeKey()).Result()
	if err != nil {
		return opErr("reading the placement records", err)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.loadedAt = time.Now()
	for tube, s := range all {
		r, err := parsePlacementRecord(s)
		if err != nil {
			return opErr("reading the placement records", fmt.Errorf("tube %q: %w", tube, err))
		}
		sp.setPlaceLocked(tube, r)
	}
	return nil
}

// refreshPlacements reads every record again if the last read is older than masterMapTTL: the
// buckets other gateways brought into use since, for the commands over every bucket in use.
func (b *Backend) refreshPlacements(ctx context.Context) error {
	sp := b.spread
	sp.mu.Lock()
	stale := time.Since(sp.loadedAt) > masterMapTTL
	sp.mu.Unlock()
	if !stale {
		return nil
	}
	return b.loadPlacements(ctx)
}

func (sp *spread) setPlaceLocked(tube string, r placementRecord) {
	sp.place[tube] = r
	for _, bk := range r.Buckets {
		sp.used[bk] = true
	}
}

// usedBuckets is every bucket a known record names, in order.
func (sp *spread) usedBuckets() []int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	out := make([]int, 0, len(sp.used))
	for bk := range sp.used {
		out = append(out, bk)
	}
	slices.Sort(out)
	return out
}

// known is tube's record if this Backend has it (no call).
func (sp *spread) known(tube string) (placementRecord, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	r, ok := sp.place[tube]
	return r, ok
}

// placement is tube's record: cached, else read, else chosen and written (HSETNX: two gateways
// placing one tube at once both use the record written first). With create false a tube that
// has no record has none (ok false): a tube never placed holds no job.
func (b *Backend) placement(ctx context.Context, tube string, create bool) (placementRecord, bool, error) {
	sp := b.spread
	if r, ok := sp.known(tube); ok {
		return r, true, nil
	}
	s, err := b.client.HGet(ctx, sp.placeKey(), tube).Result()
	if errors.Is(err, goredis.Nil) {
		if !create {
			return placementRecord{}, false, nil
		}
		if s, err = b.placeTube(ctx, tube); err != nil {
			return placementRecord{}, false, err
		}
	} else if err != nil {
		return placementRecord{}, false, opErr("reading a placement record", err)
	}
	r, err := parsePlacementRecord(s)
	if err != nil {
		return placementRecord{}, false, opErr("reading a placement record", fmt.Errorf("tube %q: %w", tube, err))
	}
	sp.mu.Lock()
	sp.setPlaceLocked(tube, r)
	sp.mu.Unlock()
	return r, true, nil
}

// placeTube chooses tube's buckets, writes its record unless another gateway was first, and
// returns the record in force.
func (b *Backend) placeTube(ctx context.Context, tube string) (string, error) {
	sp := b.spread
	sp.placeMu.Lock()
	defer sp.placeMu.Unlock()
	// The load per master: the records read lately, all of them again now and then (a
	// namespace of many tubes has a large placement hash, and placements may come in bursts).
	sp.mu.Lock()
	stale := time.Since(sp.loadedAt) > masterMapTTL
	sp.mu.Unlock()
	if stale {
		if err := b.loadPlacements(ctx); err != nil {
			return "", err
		}
	}
	masters, err := b.bucketMasters(ctx)
	if err != nil {
		return "", err
	}
	sp.mu.Lock()
	if r, ok := sp.place[tube]; ok {
		sp.mu.Unlock()
		return r.String(), nil
	}
	load := map[string]int{}
	for _, r := range sp.place {
		for _, bk := range r.Buckets {
			load[masters[bk]]++
		}
	}
	sp.mu.Unlock()
	r := placementRecord{Buckets: chooseBuckets(tube, b.shardsOf(tube), nil, masters, load), Gen: 1}
	if err := b.client.HSetNX(ctx, sp.placeKey(), tube, r.String()).Err(); err != nil {
		return "", opErr("writing a placement record", err)
	}
	s, err := b.client.HGet(ctx, sp.placeKey(), tube).Result()
	if err != nil {
		return "", opErr("reading a placement record", err)
	}
	if got, err := parsePlacementRecord(s); err == nil {
		sp.mu.Lock()
		sp.setPlaceLocked(tube, got) // before the next placement here counts the load
		sp.mu.Unlock()
	}
	if s == r.String() {
		// Written here: the tube's buckets get the namespace's policies. A policy set
		// meanwhile reaches them either way: it is written to the home slot before its setter
		// reads the records, and this record was written before the policies are read here.
		if err := b.copyPolicies(ctx, r.Buckets); err != nil {
			return "", err
		}
	}
	return s, nil
}

// shardsOf is how many shards tube is given when placed.
func (b *Backend) shardsOf(string) int { return b.spread.shards }

// bucketMasters is the master of every bucket, from the cluster's slot map (read again after
// masterMapTTL).
func (b *Backend) bucketMasters(ctx context.Context) ([]string, error) {
	sp := b.spread
	sp.mu.Lock()
	if sp.masters != nil && time.Since(sp.mapAt) < masterMapTTL {
		m := sp.masters
		sp.mu.Unlock()
		return m, nil
	}
	sp.mu.Unlock()
	slots, err := b.client.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, opErr("reading the cluster's slot map", err)
	}
	bySlot := make([]string, clusterSlots)
	for _, r := range slots {
		if len(r.Nodes) == 0 {
			continue
		}
		for s := r.Start; s <= r.End && s < clusterSlots; s++ {
			bySlot[s] = r.Nodes[0].Addr
		}
	}
	m := bucketMasters(sp.prefix, func(slot int) string { return bySlot[slot] })
	sp.mu.Lock()
	sp.masters, sp.mapAt = m, time.Now()
	sp.mu.Unlock()
	return m, nil
}

// TubeMasters names the master of each of tube's shards, in shard order (nil for a tube never
// placed, or in the one-slot layout: there every tube is on the namespace's master).
func (b *Backend) TubeMasters(ctx context.Context, tube string) ([]string, error) {
	if b.spread == nil {
		return nil, nil
	}
	r, ok, err := b.placement(ctx, tube, false)
	if err != nil || !ok {
		return nil, err
	}
	masters, err := b.bucketMasters(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(r.Buckets))
	for i, bk := range r.Buckets {
		out[i] = masters[bk]
	}
	return out, nil
}

// firstBucket is the bucket of tube's first shard, which holds its use and watch counters and
// the sessions' state about it, placing the tube if need be.
func (b *Backend) firstBucket(ctx context.Context, tube string) (int, error) {
	r, _, err := b.placement(ctx, tube, true)
	if err != nil {
		return 0, err
	}
	return r.Buckets[0], nil
}

// enter records that session s gets state in bucket: in memory, so that its end goes there,
// and once per process and bucket in {prefix}:pb:<process>, before the first call that makes
// it, so that a reaper finds it if this process dies.
func (b *Backend) enter(ctx context.Context, s backend.SessionID, bucket int) error {
	sp := b.spread
	proc := s.Process()
	sp.mu.Lock()
	ss := sp.session(s)
	entered, addr := !ss.buckets[bucket], ss.addr
	ss.buckets[bucket] = true
	recorded := sp.pb[proc][bucket]
	sp.mu.Unlock()
	if entered && addr != "" {
		// The events a bucket's scripts record name the session's address from its record
		// there. The record is made as lib.lua's register_again makes it (a session hash that
		// exists is one the scripts take as registered under its process, for the reaper).
		base := sp.base(bucket)
		_, err := b.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.HSet(ctx, base+":s:"+string(s), "ad", addr, "p", proc)
			p.SAdd(ctx, base+":procs", proc)
			p.SAdd(ctx, base+":p:"+proc, string(s))
			return nil
		})
		if err != nil {
			return opErr("recording a session's address", err)
		}
	}
	if recorded {
		return nil
	}
	if err := b.client.SAdd(ctx, sp.home+":pb:"+proc, strconv.Itoa(bucket)).Err(); err != nil {
		return opErr("recording a session's bucket", err)
	}
	sp.mu.Lock()
	if sp.pb[proc] == nil {
		sp.pb[proc] = map[int]bool{}
	}
	sp.pb[proc][bucket] = true
	sp.mu.Unlock()
	return nil
}

// callIn is call in bucket's slot.
func (b *Backend) callIn(ctx context.Context, bucket int, o op, args ...any) (any, error) {
	res, _, err := b.callSentIn(ctx, b.spread.base(bucket), o, args...)
	return res, err
}

// callFoundIn is callFound in bucket's slot.
func (b *Backend) callFoundIn(ctx context.Context, bucket int, o op, args ...any) error {
	res, err := b.callIn(ctx, bucket, o, args...)
	return found(o, res, err)
}

// fanOutBatched is the most buckets a fan-out sends through the batcher: more (stats,
// list-tubes and policies over every bucket in use, up to 1024) go out as one pipeline of
// their own, which go-redis splits per master, instead of filling the batches every other
// call waits behind.
const fanOutBatched = 8

// fanOutPiped is fanOut as one pipeline of FCALLs. A library missing on a master is loaded
// again and the pipeline sent once more (none of it ran there).
func (b *Backend) fanOutPiped(ctx context.Context, buckets []int, o op, args func(bucket int) []any) []bucketReply {
	out := make([]bucketReply, len(buckets))
	if err := b.reach.Check(); err != nil {
		for i, bk := range buckets {
			out[i] = bucketReply{bucket: bk, err: opErr(string(o), err)}
		}
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		pipe := b.client.Pipeline()
		cmds := make([]*goredis.Cmd, len(buckets))
		now := b.nowArg()
		for i, bk := range buckets {
			base := b.spread.base(bk)
			a := append([]any{base, now}, args(bk)...)
			cmds[i] = fcallCmd(ctx, b.sc.fns[o], b.keysOf(base), a...)
			_ = pipe.Process(ctx, onceCmd{cmds[i]})
		}
		sent := time.Now()
		_, _ = pipe.Exec(ctx)
		missing := false
		for i, bk := range buckets {
			res, err := cmds[i].Result()
			missing = missing || isFunctionNotFound(err)
			if err == nil {
				res, err = b.takeActions(res)
			}
			out[i] = bucketReply{bucket: bk, res: res, sent: sent, err: opErr(string(o), err)}
		}
		if !missing || attempt > 0 {
			return out
		}
		if err := b.sc.load(ctx, b.client, b.keys[0]); err != nil {
			return out
		}
	}
}

// bucketReply is one bucket's reply in a fan-out.
type bucketReply struct {
	bucket int
	res    any
	sent   time.Time
	err    error
}

// fanOut runs one call per bucket concurrently (each goes out in its own batch to its master,
// at about the same time: the fan-out costs about one round trip); args gives each bucket's
// arguments.
func (b *Backend) fanOut(ctx context.Context, buckets []int, o op, args func(bucket int) []any) []bucketReply {
	if len(buckets) > fanOutBatched && !(b.opts.WaitReplicas > 0 && waits[o]) {
		return b.fanOutPiped(ctx, buckets, o, args)
	}
	out := make([]bucketReply, len(buckets))
	var wg sync.WaitGroup
	for i, bk := range buckets {
		wg.Go(func() {
			res, sent, err := b.callSentIn(ctx, b.spread.base(bk), o, args(bk)...)
			out[i] = bucketReply{bucket: bk, res: res, sent: sent, err: err}
		})
	}
	wg.Wait()
	return out
}
