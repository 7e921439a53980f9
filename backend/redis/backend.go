// Package redis keeps beangate's jobs in Redis, so that any number of stateless gateway
// processes can serve one queue.
//
// Every state change is one Lua script (lua/*.lua, embedded; each opens with its KEYS/ARGV/
// return contract), so it is atomic across gateways; lua/lib.lua documents the key layout.
// The scripts are loaded as one Redis Functions library (FUNCTION LOAD; see scripts.go),
// reloaded whenever Redis reports it missing; so Redis 7.0 or later is required. Operations
// from all sessions are queued and sent in batches, one FCALL of lua/batch.lua each (batch.go).
// Time is the Redis server's TIME unless a Clock is injected. Delay maturing, TTR expiry and
// pause expiry are applied inside the scripts that look at a tube, so no sweeper is needed.
//
// Blocking reserves wait for a publish on the namespace's channel (every script that may make
// a job reservable publishes its tube) plus a timer for the next due time the reserve script
// reports; correctness never depends on a publish arriving.
//
// Each gateway process keeps a heartbeat lease (LeaseTTL, renewed every LeaseTTL/3); every
// Backend runs the reaper (lua/reap.lua) every LeaseTTL/2, which ends the sessions of
// processes whose lease has stayed missing for a grace of LeaseTTL/2, so a gateway that dies
// does not strand its reservations. The first run that finds a lease missing only suspects its
// process: after a Redis outage longer than the lease every lease has expired, and the live
// gateways renew theirs within the grace. A dead gateway's reservations return within
// LeaseTTL + grace + two reaper periods, 2.5 × LeaseTTL (12.5 s with the default 5 s lease),
// sooner when several gateways run the reaper. A session end that fails (Redis unreachable
// when a connection closes) is retried in the background until it succeeds (lease.go).
//
// Durability assumptions: Redis runs with AOF (appendonly yes; appendfsync always for no loss
// of acknowledged jobs on power failure, everysec for at most a second) and maxmemory-policy
// noeviction (an evicting policy silently drops jobs). New warns when either is not so. If Redis
// loses data anyway, live gateways carry on: job ids do not go back (idfloor.go), and a session
// the store forgot comes back with its next commands (lua/lib.lua). Calls are never retried by
// go-redis (MaxRetries -1; onceCmd for a cluster's own retries), so a command is applied at
// most once.
//
// A Redis Cluster works too (Options.Cluster; cluster.go): a namespace's keys share one hash
// tag, so each call goes whole to the master of its slot, the library is loaded on every
// master, and the channel is a plain one, which a cluster delivers on every node. With
// Options.Layout spread a namespace's tubes are spread over buckets of their own instead, each
// under its own hash tag (spread*.go, docs/redis-cluster.md).
//
// Tube policies (backend.Policies, policy.go) live in Redis too: each script that makes a state
// change applies the policy of the job's tube in the same call, so every gateway applies the
// same ones atomically; a tube's policy is read with the tube hash's other fields, so a tube
// without one costs no command more. Each gateway sweeps the governed tubes every 0.5 s, so that
// an expiry acts without a command on its tube.
//
// Statistics from this backend (job counts, totals, timeouts, tubes, per-tube counters, using
// and watching, pause) are namespace-wide, across all gateways. list-tubes keeps beanstalkd's
// order: insertion order, a removed tube's slot taken by the last tube.
package redis

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/batch"
	"github.com/beangate/beangate/internal/failurelog"
)

var _ backend.Backend = (*Backend)(nil)

// Backend is a backend.Backend on Redis. Use New.
type Backend struct {
	backend.NoBinlog
	opts       Options
	safetyPoll time.Duration           // safetyPoll, except in tests that must see a lost wake-up
	dropPub    atomic.Bool             // tests: every publish is lost
	client     goredis.UniversalClient // a *goredis.Client or, for a Redis Cluster, a *goredis.ClusterClient
	ownClient  bool
	base       string   // "{prefix}"
	spread     *spread  // the spread layout's state (spread.go); nil for one slot
	keys       []string // KEYS of every script: the namespace's stats hash
	sc         *scripts
	batch      *batch.Batcher[opCall, opReply]
	waiters    *waiters
	pubsub     *goredis.PubSub
	reach      *backend.Reachability // fails calls at once while Redis is known unreachable (outage.go)
	failures   failurelog.StoreLogs  // session ends and the background loops (lease.go) that fail

	floor       atomic.Uint64 // the highest job id this process has handed out (idfloor.go)
	reconnected chan struct{} // the subscription was made again: Redis may have lost data
	restoreNow  chan struct{} // the same, for the restore loop (lease.go)

	procsMu sync.Mutex
	procs   map[string]struct{} // gateway processes whose lease this Backend keeps alive

	unendedMu sync.Mutex
	unended   map[backend.SessionID]struct{} // sessions whose end failed, retried (lease.go)

	observersMu sync.Mutex
	observers   []func(backend.PolicyAction) // ObservePolicyActions (policy.go)
	sweepNow    chan struct{}                // a policy was set here: sweep (policy.go)

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New connects, checks the server's settings, subscribes to the namespace's channel and starts
// the heartbeat and reaper loops.
func New(ctx context.Context, opts Options) (*Backend, error) {
	routeClientLog(opts.Logger)
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, backend.BadOptions(err)
	}
	b := &Backend{
		opts:       opts,
		safetyPoll: safetyPoll,
		client:     opts.Client,
		base:       "{" + opts.Prefix + "}",
		sc:         loadScripts(),
		waiters:    newWaiters(),
		procs:      map[string]struct{}{},
		unended:    map[backend.SessionID]struct{}{},
		stop:       make(chan struct{}),

		reconnected: make(chan struct{}, 1),
		restoreNow:  make(chan struct{}, 1),
		sweepNow:    make(chan struct{}, 1),
	}
	b.keys = []string{b.base + ":stats"}
	if opts.Layout == LayoutSpread {
		b.spread = newSpread(opts.Prefix, opts.Shards)
	}
	if b.client == nil {
		if b.client, err = dial(opts); err != nil { // see cluster.go
			return nil, err
		}
		b.ownClient = true
	}
	if err := b.start(ctx); err != nil {
		if b.ownClient {
			_ = b.client.Close()
		}
		return nil, err
	}
	return b, nil
}

func (b *Backend) start(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	defer cancel()
	server, err := b.slotClient(cctx)
	if err != nil {
		return err
	}
	if err := server.Ping(cctx).Err(); err != nil {
		return opErr("ping", err)
	}
	b.checkServerSettings(cctx, server)
	if err := b.sc.load(cctx, b.client, b.keys[0]); err != nil {
		return opErr("load functions", err)
	}
	if err := b.checkLayout(cctx); err != nil {
		return err
	}
	if b.spread != nil {
		if err := b.loadPlacements(cctx); err != nil {
			return err
		}
	}
	b.failures = failurelog.NewStoreLogs(b.opts.Logger, "Redis")
	b.reach = backend.NewReachability(b.ping, min(b.opts.CommandTimeout, maxProbeTimeout), nil, b.opts.Logger)
	b.batch = newBatcher(b)
	if err := b.restore(cctx); err != nil {
		return err
	}
	if b.spread != nil {
		b.pubsub = b.spreadSubscribe(cctx) // spread_notify_temp.go
	} else {
		b.pubsub = b.client.Subscribe(cctx, b.base+":ready")
	}
	if _, err := b.pubsub.Receive(cctx); err != nil { // the subscription is live from here on
		_ = b.pubsub.Close()
		return opErr("subscribe", err)
	}
	b.wg.Add(6)
	go b.policySweepLoop()
	go b.listen()
	go b.heartbeatLoop()
	go b.restoreLoop()
	go b.reapLoop()
	go b.retryEndsLoop()
	return nil
}

// checkServerSettings warns about the settings whose absence loses jobs without an error: an
// evicting maxmemory-policy drops job keys under memory pressure, and without AOF (appendonly
// no, or appendfsync no) a Redis restart forgets acknowledged jobs. One CONFIG GET for all of
// them, asked of server, which holds the namespace (in a cluster, each master has its own
// settings). CONFIG may be disabled (managed Redis), which is tolerated.
func (b *Backend) checkServerSettings(ctx context.Context, server goredis.UniversalClient) {
	cmd := goredis.NewMapStringStringCmd(ctx, "config", "get", "maxmemory-policy", "appendonly", "appendfsync")
	_ = server.Process(ctx, cmd)
	v, err := cmd.Result()
	if err != nil {
		b.opts.Logger.Info("redis: cannot read the server's settings; make sure maxmemory-policy is noeviction and appendonly yes", "err", err)
		return
	}
	if p, ok := v["maxmemory-policy"]; ok && p != "noeviction" {
		b.opts.Logger.Warn("redis: maxmemory-policy is not noeviction; Redis may evict jobs", "policy", p)
	}
	if a, ok := v["appendonly"]; ok && a != "yes" {
		b.opts.Logger.Warn("redis: appendonly is not yes; a Redis restart loses the jobs put since its last snapshot", "appendonly", a)
	} else if f, ok := v["appendfsync"]; ok && f == "no" {
		// everysec (at most a second lost) and always are documented choices; no is not.
		b.opts.Logger.Warn("redis: appendfsync is no; a Redis host crash may lose acknowledged jobs", "appendfsync", f)
	}
}

// Close stops the heartbeats, the reaper, the retries of failed session ends and the
// subscription. Sessions are NOT ended (nor those whose end was being retried): to the other
// gateways this looks like a crash, and their reapers return this process's reservations once
// its lease has expired (see reap.lua for the grace).
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		close(b.stop)
		_ = b.pubsub.Close()
		b.batch.Stop()
		b.wg.Wait()
		b.reach.Close()
		b.waiters.wakeAll()
		if b.ownClient {
			_ = b.client.Close()
		}
	})
	return nil
}

// nowArg is the scripts' ARGV[2]: the injected clock's time in ms, or "" for Redis TIME.
func (b *Backend) nowArg() string {
	if b.opts.Clock == nil {
		return ""
	}
	return strconv.FormatInt(b.opts.Clock.Now().UnixMilli(), 10)
}

// clock runs this process's timers (a waiting reserve's due time and timeout): the injected
// Clock, else backend.SystemClock, whose timers fire on time to the kernel's timer slack. A
// runtime timer (time.AfterFunc) fires up to a millisecond late while the process idles in the
// runtime's poller, and a delayed job, a TTR expiry or a pause end with it.
func (b *Backend) clock() backend.Clock {
	if b.opts.Clock == nil {
		return backend.SystemClock{}
	}
	return b.opts.Clock
}

// localNow is this process's idea of now, for timers.
func (b *Backend) localNow() time.Time { return b.clock().Now() }

// call runs one operation in a batch (batch.go), bounded by CommandTimeout; args are its own
// arguments (its ARGV[3..]). Its error is translated by opErr: a script returning false is
// backend.ErrNotFound; anything else is an infrastructure error.
func (b *Backend) call(ctx context.Context, o op, args ...any) (any, error) {
	res, _, err := b.callSent(ctx, o, args...)
	return res, err
}

// callSent is call that also returns when the operation was sent to Redis (see
// batch.Batcher.DoSent).
func (b *Backend) callSent(ctx context.Context, o op, args ...any) (any, time.Time, error) {
	return b.callSentIn(ctx, b.base, o, args...)
}

// callSentIn is callSent in the slot of base (a bucket's, in the spread layout).
func (b *Backend) callSentIn(ctx context.Context, base string, o op, args ...any) (any, time.Time, error) {
	if err := b.reach.Check(); err != nil {
		return nil, time.Time{}, opErr(string(o), err)
	}
	r, sent, err := b.batch.DoSent(ctx, opCall{op: o, base: base, now: b.nowArg(), args: args})
	if err == nil {
		err = r.err
	}
	if err == nil {
		r.v, err = b.takeActions(r.v)
	}
	if ctx.Err() == nil && isOutage(err) {
		b.reach.Failed(err)
	}
	return r.v, sent, opErr(string(o), err)
}

// keysOf is the KEYS of every script called in base's slot: its stats hash, by which a
// Cluster client routes the call.
func (b *Backend) keysOf(base string) []string {
	if base == b.base {
		return b.keys
	}
	return []string{base + ":stats"}
}

// ms converts a duration to the scripts' integral milliseconds.
func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// padID is a job id as the scripts name it: 20 digits (as many as a uint64 can have), so that
// sorted-set ties order by id. Written by hand: fmt.Sprintf was 2 % of BenchmarkCycle's CPU.
func padID(id uint64) string {
	var b [20]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + id%10)
		id /= 10
	}
	return string(b[:])
}
