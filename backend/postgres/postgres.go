// Package postgres is a Backend that keeps jobs in PostgreSQL, shared by any number of gateway
// processes: SKIP LOCKED reserves, LISTEN/NOTIFY wake-ups, heartbeat leases for gateway processes,
// and group commit of concurrent puts and deletes.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/batch"
	"github.com/beangate/beangate/internal/failurelog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var _ backend.Backend = (*Backend)(nil)

// Backend is the PostgreSQL Backend. It is safe for concurrent use.
type Backend struct {
	backend.NoBinlog

	poll     time.Duration // pollInterval, except in tests that must see a lost wake-up
	pool     *pgxpool.Pool
	ownsPool bool
	opts     Options
	st       statements
	origin   string // tells this Backend's notifications from other gateways'
	// clock runs timers; time itself comes from the database unless opts.Clock is set.
	clock    backend.Clock
	waiters  *waiters
	empty    *emptyLists // what the last reserve over a watch list found, and what sessions hold
	writes   *batch.Batcher[write, writeResult]
	reserves *batch.Batcher[reserveItem, reserveResult]
	// dueLists: the watch lists (reserveItem.watchList) whose last reserve found due jobs to
	// promote; their next reserve promotes first, in one round (see execReserves). A hint: at
	// most maxDueLists, forgotten all at once when full.
	dueMu    sync.Mutex
	dueLists map[string]struct{}
	leases   *leases
	// renewFailed: the last lease renewal failed (renewLeases); the reaper waits meanwhile.
	renewFailed atomic.Bool
	// reach fails calls at once while the database is known unreachable (outage.go);
	// listenKick makes the listener drop its connection then.
	reach      *backend.Reachability
	listenKick chan struct{}
	failures   failurelog.StoreLogs // session ends and the background work that fail
	dialer     dialer               // the connections of a pool New opened

	pol policyState // policies.go

	// undurable: the sessions whose reserves or touches are not known durable (durability.go);
	// durableEveryTest, when set, replaces durablePointEvery.
	undurable        *undurable
	durableEveryTest atomic.Int64

	// retried, when set (tests), sees every error attempt retries: a deadlock or serialization
	// failure, which a caller never sees otherwise.
	retried atomic.Pointer[func(error)]

	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// randomID names a Backend instance in notification payloads.
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,40}$`)

// New connects (or adopts opts.Pool), applies migrations (with opts.SkipMigrate: checks that they
// are applied), and starts the listener and the heartbeat loop.
func New(ctx context.Context, opts Options) (*Backend, error) {
	opts = opts.withDefaults()
	if !schemaName.MatchString(opts.Schema) {
		return nil, backend.BadOptions(fmt.Errorf("postgres: options: schema name %q: want letters, digits and _ (at most 41)", opts.Schema))
	}
	origin := randomID()
	st, err := loadStatements(opts.Schema, origin)
	if err != nil {
		return nil, err
	}
	b := &Backend{poll: pollInterval, opts: opts, st: st, origin: origin, clock: opts.Clock, waiters: newWaiters(), empty: newEmptyLists(), undurable: newUndurable(), stop: make(chan struct{})}
	if b.clock == nil {
		b.clock = backend.SystemClock{}
	}
	b.listenKick = make(chan struct{}, 1)
	b.failures = failurelog.NewStoreLogs(opts.Logger, "PostgreSQL")
	b.reach = backend.NewReachability(b.probe, min(opts.CommandTimeout, maxProbeTimeout), b.dropConnections, opts.Logger)
	b.pool = opts.Pool
	if b.pool == nil {
		cfg, err := pgxpool.ParseConfig(opts.DSN)
		if err != nil {
			return nil, backend.BadOptions(opErr("DSN", err))
		}
		if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > opts.CommandTimeout {
			cfg.ConnConfig.ConnectTimeout = opts.CommandTimeout
		}
		tuneConnConfig(cfg.ConnConfig, opts.CommandTimeout)
		b.dialer.down = func() bool { return b.reach.Check() != nil }
		b.dialer.lost = b.serverLost
		b.dialer.wrap(&cfg.ConnConfig.Config)
		cfg.ConnConfig.AfterConnect = b.dialer.afterConnect(cfg.ConnConfig.AfterConnect)
		if b.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, opErr("connect", err)
		}
		b.ownsPool = true
	}
	mctx, cancel := context.WithTimeout(ctx, 4*opts.CommandTimeout)
	if opts.SkipMigrate {
		err = checkMigrated(mctx, b.pool, opts.Schema)
	} else {
		err = migrate(mctx, b.pool, opts.Schema, opts.Logger)
	}
	cancel()
	if err != nil {
		b.closePool()
		return nil, startErr(err)
	}
	// One writer: concurrent write batches would only queue on the same tube and counter rows.
	b.writes = batch.New(batch.Config[write, writeResult]{
		Exec: b.execWrites, MaxCalls: maxBatch, MaxInFlight: 1, Timeout: opts.CommandTimeout,
	})
	// One reserver: the reserves arriving together are answered by one statement per watch list,
	// all in one round trip and one (asynchronous) commit.
	b.reserves = batch.New(batch.Config[reserveItem, reserveResult]{
		Exec: b.execReserves, MaxCalls: maxBatch, MaxInFlight: 1, Timeout: opts.CommandTimeout,
	})
	b.leases = newLeases()
	pctx, cancel := context.WithTimeout(ctx, opts.CommandTimeout)
	err = b.loadPolicies(pctx)
	if err == nil {
		err = b.recordMaxJobSize(pctx)
	}
	cancel()
	if err != nil {
		b.closePool()
		return nil, startErr(err)
	}
	listening := make(chan struct{})
	b.wg.Add(5)
	go b.durablePoints()
	go b.policySweepLoop()
	go b.listen(listening)
	go b.renewLeases()
	go b.heartbeat()
	if opts.VacuumInterval > 0 {
		b.wg.Add(1)
		go b.vacuumLoop()
	}
	select { // a listener not yet listening would miss the first wake-ups; do not wait forever
	case <-listening:
	case <-time.After(opts.CommandTimeout):
		opts.Logger.Warn("postgres: listener not ready; wake-ups fall back to polling")
	case <-ctx.Done():
	}
	return b, nil
}

// Close stops the listener, heartbeats and batchers and closes a pool New opened. Open sessions
// are not ended: to other gateways this looks like a crash, and their lease runs out.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		close(b.stop)
		b.writes.Stop()
		b.reserves.Stop()
		b.wg.Wait()
		if b.reach != nil {
			b.reach.Close()
		}
		b.closePool()
	})
	return nil
}

func (b *Backend) closePool() {
	if b.ownsPool {
		b.pool.Close()
	}
}

// now is the $1 of statements that read time: the injected clock's time, or NULL for the
// database's now().
func (b *Backend) now() any {
	if b.opts.Clock == nil {
		return nil
	}
	return b.opts.Clock.Now()
}

// run calls f for operation op, its ctx the caller's (see call), and translates its error.
func (b *Backend) run(ctx context.Context, op string, f func(ctx context.Context) error) error {
	if err := b.tickPolicies(ctx, false); err != nil {
		return err
	}
	return opErr(op, b.call(ctx, f))
}

// call is attempt for a caller's ctx. A failure after the caller gave up (ctx ended: its own
// deadline, a client gone) is the caller's, not the database's: ctx's error, and no sign of an
// outage. Any other failure that says the database cannot be reached is noted.
func (b *Backend) call(ctx context.Context, f func(ctx context.Context) error) error {
	err := b.attempt(ctx, f)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	b.noteOutage(err)
	return err
}

// runBatch calls f for a batch's Exec (internal/batch), whose ctx ends when the batch's calls are
// due: the database did not answer in time, a sign of an outage. Its error is left for each
// caller to translate for its own operation.
func (b *Backend) runBatch(ctx context.Context, f func(ctx context.Context) error) error {
	err := b.attempt(ctx, f)
	b.noteOutage(err)
	return err
}

// attempt calls f with a context bounded by CommandTimeout, retrying deadlocks, unless the
// Backend is closed or the database known unreachable (then it fails at once).
func (b *Backend) attempt(ctx context.Context, f func(ctx context.Context) error) error {
	select {
	case <-b.stop:
		return errClosed
	default:
	}
	if err := b.reach.Check(); err != nil {
		return err
	}
	var err error
	for range 3 {
		cctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
		err = f(cctx)
		cancel()
		if err == nil || !retryable(err) {
			break
		}
		if f := b.retried.Load(); f != nil {
			(*f)(err)
		}
	}
	return err
}

// noteOutage tells the Reachability of a failure that says the database cannot be reached.
func (b *Backend) noteOutage(err error) {
	if !errors.Is(err, backend.ErrUnreachable) && isOutage(err) {
		b.reach.Failed(err)
	}
}

// batch sends statements in one round trip; without BEGIN they form one implicit transaction,
// so they commit (or fail) together.
func (b *Backend) batch(ctx context.Context, bt *pgx.Batch) error {
	return b.pool.SendBatch(ctx, bt).Close()
}

// tuneConnConfig sets what the statements rely on for speed, unless the DSN says otherwise.
// Every statement is prepared once per connection (pgx's statement cache) and is made of index
// lookups whose best plan does not depend on the values: planning the reserve CTE for each call
// (a custom plan) costs more than running it, so generic plans are forced.
//
// Sequential scans are disabled: a generic plan is made once, when a connection first runs a
// statement (and again after each VACUUM invalidates it), and a queue table is often empty or tiny
// at that moment, so the planner rightly prefers a seq scan then — and the plan is kept while the
// table grows to thousands of rows, every reserve and delete reading all of them (this was most
// of the database's CPU under load). Every statement is written for an index; the few that have
// none (one-row tables) still get their seq scan, as disabling only penalises it. That penalty
// (a cost of 1e10) would push such plans over jit_above_cost and have every execution
// JIT-compiled (7% of the database's CPU in a profile): jit is off.
//
// synchronous_commit is on, whatever the server's default: an acknowledged put, delete, release,
// bury or kick must be on disk. Statements that need no durability (reserve, touch, session
// bookkeeping) turn it off for their own transaction.
//
// idle_in_transaction_session_timeout is twice the command timeout: every transaction here runs
// within one command timeout, and one whose gateway was cut off in its middle would otherwise
// keep its row locks, blocking the other gateways, until the server's TCP keepalive noticed.
func tuneConnConfig(cfg *pgx.ConnConfig, commandTimeout time.Duration) {
	idle := strconv.FormatInt((2 * commandTimeout).Milliseconds(), 10)
	for k, v := range map[string]string{"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off", "jit": "off", "synchronous_commit": "on",
		"idle_in_transaction_session_timeout": idle} {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
}
