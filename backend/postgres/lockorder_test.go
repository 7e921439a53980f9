package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/clocktest"
)

// Statements that lock several rows take them in one order — job rows (by id), then tube rows
// (by name), then the counters row — so that no two wait for each other: such a deadlock lasts
// until PostgreSQL's deadlock_timeout (1 s) breaks it, and every command queued behind it stalls
// that long (a write batch stalls every put and delete of its gateway). Here tube a's row is held
// by another transaction while each statement runs: waiting for it, the statement must hold
// nothing that comes after it in that order (tube b, counters), whatever order its plan visits
// the rows in: tube b is created before a, so that a scan of the tubes table meets b first.
func TestWaitingForATubeHoldsNothingAfterIt(t *testing.T) {
	ctx := testCtx(t)
	const bigID = int64(1) << 40 // import: ids no put hands out
	tests := []struct {
		name string
		// policy, if set, governs both tubes before their jobs are put; a statement with no
		// variant without policies runs only with them.
		policy *backend.Policy
		// run runs the statement in tx, on tubes a and b (ids: a job of each).
		run func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, ids []int64) error
	}{
		{"put", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, _ []int64) error {
			args := []any{b.now(), []string{"b", "a"}, []int64{0, 0}, []int64{0, 0}, []int64{60e6, 60e6},
				[][]byte{[]byte("x"), []byte("y")}, []string{},
				[]*string{nil, nil}, []*string{nil, nil}} // no waiting reserve to hand them to
			if policies {
				args = append(args, []string{"lockorder.1", "lockorder.1"}) // the producers
			}
			_, err := tx.Exec(ctx, b.variant("put", policies), args...)
			return err
		}},
		{"delete", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, ids []int64) error {
			_, err := tx.Exec(ctx, b.variant("delete", policies), b.now(), ids, []string{"lockorder.1", "lockorder.1"})
			return err
		}},
		{"import", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, _ []int64) error {
			i32 := []int32{0, 0}
			i64 := []int64{0, 0}
			_, err := tx.Exec(ctx, b.variant("import", policies), b.now(), []string{"k1", "k2"},
				[]int64{bigID, bigID + 1}, []string{"b", "a"}, []int16{1, 1}, i64, []int64{60e6, 60e6}, i64,
				i64, i64, i32, i32, i32, i32, i32, [][]byte{[]byte("x"), []byte("y")})
			return err
		}},
		{"sql put", nil, func(ctx context.Context, b *Backend, tx pgx.Tx, _ bool, _ []int64) error {
			// Its tube rows are taken when the transaction commits (requireHoldsNothingAfter
			// commits it), by name whatever the order of the calls.
			for _, tube := range []string{"b", "a"} {
				if _, err := sqlPut(ctx, tx, b.opts.Schema, tube, "x", 0, "0", "60 s"); err != nil {
					return err
				}
			}
			return nil
		}},
		{"tick_expire", &backend.Policy{Tube: "*", ExpireAfter: time.Hour},
			func(ctx context.Context, b *Backend, tx pgx.Tx, _ bool, _ []int64) error {
				// Two hours on: both jobs have expired, and are deleted.
				_, err := tx.Exec(ctx, b.st.get("tick_expire"), time.Now().Add(2*time.Hour))
				return err
			}},
	}
	for _, tt := range tests {
		for _, policies := range []bool{false, true} {
			if tt.policy != nil && !policies {
				continue
			}
			t.Run(fmt.Sprintf("%s/policies=%v", tt.name, policies), func(t *testing.T) {
				b := newTestBackend(t, nil)
				schema := pgx.Identifier{b.opts.Schema}.Sanitize()
				if tt.policy != nil {
					require.NoError(t, b.SetPolicy(ctx, *tt.policy))
				}
				var ids []int64
				for _, tube := range []string{"b", "a"} {
					id, err := b.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("x")})
					require.NoError(t, err)
					ids = append(ids, int64(id))
				}

				requireHoldsNothingAfter(t, ctx, b, "tube a", "SELECT 1 FROM "+schema+".tubes WHERE name = 'a' FOR UPDATE",
					func(ctx context.Context, tx pgx.Tx) error { return tt.run(ctx, b, tx, policies, ids) },
					"SELECT 1 FROM "+schema+".tubes WHERE name = 'b' FOR UPDATE NOWAIT",
					"SELECT 1 FROM "+schema+".counters WHERE id = 1 FOR UPDATE NOWAIT")
			})
		}
	}
}

// Job rows are taken in id order by every statement that waits for several, whatever order its
// plan meets them in: a bitmap scan meets them in physical order, and a job's latest version is
// written after the versions of jobs changed before it. Here jobs 1 and 2 (tubes b and a) are
// changed in the order 2, 1, so that job 1's row lies after job 2's, and job 1 is held by another
// transaction while each statement runs: waiting for it, the statement must hold nothing that
// comes after it (job 2, a tube, a rate bucket, the counters row).
func TestWaitingForAJobHoldsNothingAfterIt(t *testing.T) {
	const s = backend.SessionID("lockorder.1")
	later := func(b *Backend) any { return time.Now().Add(time.Hour) } // both reservations run out
	tests := []struct {
		name string
		// reserve: both jobs are reserved by s (else only job 1 is).
		reserve bool
		run     func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, ids []int64) error
	}{
		{"delete", false, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, ids []int64) error {
			_, err := tx.Exec(ctx, b.variant("delete", policies), b.now(), ids, []string{string(s), string(s)})
			return err
		}},
		{"lock_tubes", false, func(ctx context.Context, b *Backend, tx pgx.Tx, _ bool, ids []int64) error {
			_, err := tx.Exec(ctx, b.st.get("lock_tubes"), []string{"c"}, ids)
			return err
		}},
		{"end_sessions", true, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, _ []int64) error {
			_, err := tx.Exec(ctx, b.variant("end_sessions", policies), b.now(), []string{string(s)})
			return err
		}},
		{"promote_tubes", true, func(ctx context.Context, b *Backend, tx pgx.Tx, policies bool, _ []int64) error {
			_, err := tx.Exec(ctx, b.variant("promote_tubes", policies), later(b), []string{"a", "b"}, []string{"other"})
			return err
		}},
		{"policy_apply", false, func(ctx context.Context, b *Backend, tx pgx.Tx, _ bool, _ []int64) error {
			// Another expiry for every tube: every job is filed anew.
			_, err := tx.Exec(ctx, b.st.get("policy_set"), "*", "%", true, 0, 1, int64(0), time.Minute.Microseconds(),
				int16(0), int64(0), 0.0, int64(0), false, int64(0), int64(0), false)
			if err == nil {
				_, err = tx.Exec(ctx, b.st.get("policy_apply"), "*", "%", true, true)
			}
			return err
		}},
	}
	for _, tt := range tests {
		for _, policies := range []bool{false, true} {
			if tt.name == "policy_apply" && !policies || tt.name == "lock_tubes" && policies {
				continue // one variant only
			}
			t.Run(fmt.Sprintf("%s/policies=%v", tt.name, policies), func(t *testing.T) {
				ctx := testCtx(t)
				b := newTestBackend(t, nil)
				schema := pgx.Identifier{b.opts.Schema}.Sanitize()
				if policies {
					require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "*", ExpireAfter: time.Hour}))
				}
				require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))
				var ids []int64
				for _, tube := range []string{"b", "a"} {
					id, err := b.Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte(tube)})
					require.NoError(t, err)
					ids = append(ids, int64(id))
				}
				// Job 2 changes first, then job 1, whose row then lies after job 2's.
				for _, id := range []int64{ids[1], ids[0]} {
					if id == ids[1] && !tt.reserve {
						require.NoError(t, b.PauseTube(ctx, "a", 0)) // (nothing to change)
						continue
					}
					_, err := b.ReserveJob(ctx, s, uint64(id))
					require.NoError(t, err)
				}

				// Rate buckets of both tubes, as reserves under a rate policy leave them.
				_, err := b.pool.Exec(ctx, "INSERT INTO "+schema+".tube_rates (tube, tat) VALUES ('a', now()), ('b', now())")
				require.NoError(t, err)

				requireHoldsNothingAfter(t, ctx, b, "job 1", fmt.Sprintf("SELECT 1 FROM %s.jobs WHERE id = %d FOR UPDATE", schema, ids[0]),
					func(ctx context.Context, tx pgx.Tx) error { return tt.run(ctx, b, tx, policies, ids) },
					fmt.Sprintf("SELECT 1 FROM %s.jobs WHERE id = %d FOR UPDATE NOWAIT", schema, ids[1]),
					"SELECT 1 FROM "+schema+".tubes WHERE name IN ('a', 'b') FOR UPDATE NOWAIT",
					"SELECT 1 FROM "+schema+".tube_rates FOR UPDATE NOWAIT",
					"SELECT 1 FROM "+schema+".counters WHERE id = 1 FOR UPDATE NOWAIT")
			})
		}
	}
}

// requireHoldsNothingAfter runs statements (run, in a transaction of its own) while another
// transaction holds a row (hold, a locking read of what), and once they wait for it checks
// that they hold none of the rows the probes (NOWAIT locking reads) take: rows that come after
// it in the lock order.
func requireHoldsNothingAfter(t *testing.T, ctx context.Context, b *Backend, what, hold string, run func(context.Context, pgx.Tx) error, probes ...string) {
	t.Helper()
	holder, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	_, err = holder.Exec(ctx, hold)
	require.NoError(t, err)

	conn, err := b.pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	pid := conn.Conn().PgConn().PID()
	done := make(chan error, 1)
	go func() {
		tx, err := conn.Begin(ctx)
		if err == nil {
			err = run(ctx, tx)
		}
		if err == nil {
			err = tx.Commit(ctx)
		}
		done <- err
	}()
	require.Eventually(t, func() bool {
		var waiting bool
		err := b.pool.QueryRow(ctx, "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&waiting)
		return err == nil && waiting
	}, 5*time.Second, 5*time.Millisecond, "the statement never waited for %s", what)

	for _, probe := range probes {
		tx, err := b.pool.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, probe)
		_ = tx.Rollback(ctx)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
			t.Errorf("waiting for %s, it holds what comes after it: %s", what, probe)
			continue
		}
		require.NoError(t, err)
	}
	require.NoError(t, holder.Rollback(ctx))
	require.NoError(t, <-done)
}

// lockPair is one side of TestNoTwoWritesDeadlock: a gateway (Backend) and the session and jobs
// its writes act on this round.
type lockPair struct {
	b       *Backend
	session backend.SessionID
	held    []uint64 // reserved by session: one in tube a, one in b
	ready   []uint64 // ready in a and b, shared with the other side
	delayed []uint64 // delayed in a and b, shared
	buried  uint64   // in a, shared
}

// lockOps are the writes of TestNoTwoWritesDeadlock, each a gateway's transactions as a client
// makes them (two calls at once where a write batch may carry both). Tubes a and b hold the
// jobs; c exists only while a session uses or watches it, so it is created and collected.
var lockOps = []struct {
	name     string
	policies bool // only where policies are in force
	run      func(ctx context.Context, p *lockPair) error
}{
	{"put", false, func(ctx context.Context, p *lockPair) error {
		return putAll(ctx, p.b, []string{"b", "a"}, 0)
	}},
	{"put delayed", false, func(ctx context.Context, p *lockPair) error {
		return putAll(ctx, p.b, []string{"b", "a"}, time.Second)
	}},
	{"delete", false, func(ctx context.Context, p *lockPair) error {
		return writeAll(ctx, p.b, deletion{int64(p.held[1]), string(p.session)}, deletion{int64(p.held[0]), string(p.session)})
	}},
	{"delete ready", false, func(ctx context.Context, p *lockPair) error {
		return writeAll(ctx, p.b, deletion{int64(p.ready[1]), string(p.session)}, deletion{int64(p.ready[0]), string(p.session)})
	}},
	{"put and delete", false, func(ctx context.Context, p *lockPair) error {
		return writeAll(ctx, p.b, backend.PutParams{Tube: "b", TTR: time.Minute, Body: []byte(fmt.Sprint(time.Now().UnixNano()))},
			deletion{int64(p.ready[1]), string(p.session)}, deletion{int64(p.ready[0]), string(p.session)},
			deletion{int64(p.held[0]), string(p.session)})
	}},
	{"use", false, func(ctx context.Context, p *lockPair) error {
		for _, tube := range []string{"c", "b", "a", "default"} {
			if err := p.b.UseTube(ctx, p.session, tube); err != nil {
				return err
			}
		}
		return nil
	}},
	{"watch and ignore", false, func(ctx context.Context, p *lockPair) error {
		for _, f := range []func(context.Context, backend.SessionID, string) error{p.b.WatchTube, p.b.WatchTube, p.b.IgnoreTube, p.b.IgnoreTube} {
			if err := f(ctx, p.session, "c"); err != nil {
				return err
			}
		}
		return nil
	}},
	{"end session", false, func(ctx context.Context, p *lockPair) error {
		return p.b.EndSession(ctx, p.session)
	}},
	{"reserve", false, func(ctx context.Context, p *lockPair) error {
		_, err := p.b.Reserve(ctx, backend.ReserveParams{Session: p.session, Tubes: []string{"b", "a"}})
		return err
	}},
	{"reserve job", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { _, err := p.b.ReserveJob(ctx, p.session, p.ready[2]); return err },
			func() error { _, err := p.b.ReserveJob(ctx, p.session, p.delayed[0]); return err })
	}},
	{"release", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { return p.b.Release(ctx, backend.ReleaseParams{Session: p.session, ID: p.held[0]}) },
			func() error {
				return p.b.Release(ctx, backend.ReleaseParams{Session: p.session, ID: p.held[1], Delay: time.Second})
			})
	}},
	{"bury", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { return p.b.Bury(ctx, p.session, p.held[0], 1) },
			func() error { return p.b.Bury(ctx, p.session, p.held[1], 1) })
	}},
	{"touch", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { return p.b.Touch(ctx, p.session, p.held[0]) },
			func() error { return p.b.Touch(ctx, p.session, p.held[1]) })
	}},
	{"kick", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { _, err := p.b.Kick(ctx, "a", 2); return err },
			func() error { _, err := p.b.Kick(ctx, "b", 2); return err })
	}},
	{"kick job", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { return p.b.KickJob(ctx, p.buried) },
			func() error { return p.b.KickJob(ctx, p.delayed[1]) })
	}},
	{"pause", false, func(ctx context.Context, p *lockPair) error {
		for _, d := range []time.Duration{time.Minute, 0} {
			if err := both(func() error { return p.b.PauseTube(ctx, "b", d) },
				func() error { return p.b.PauseTube(ctx, "a", d) }); err != nil {
				return err
			}
		}
		return nil
	}},
	{"delete jobs", false, func(ctx context.Context, p *lockPair) error {
		_, err := p.b.DeleteJobs(ctx, "a", backend.Ready, 2)
		return err
	}},
	{"move jobs", false, func(ctx context.Context, p *lockPair) error {
		return both(func() error { _, err := p.b.MoveJobs(ctx, "a", "b", backend.Ready, 1); return err },
			func() error { _, err := p.b.MoveJobs(ctx, "b", "a", backend.Delayed, 1); return err })
	}},
	{"sql put", false, func(ctx context.Context, p *lockPair) error {
		// An application's transaction (on the gateway's pool, to be seen under its name),
		// its tube rows taken at COMMIT. Into unique tubes in name order, as documented: their
		// advisory locks are taken at each call.
		tubes := []string{"b", "a"}
		if p.b.policiesActive() {
			tubes = []string{"a", "b"}
		}
		return pgx.BeginFunc(ctx, p.b.pool, func(tx pgx.Tx) error {
			for _, tube := range tubes {
				if _, err := sqlPut(ctx, tx, p.b.opts.Schema, tube, fmt.Sprint(time.Now().UnixNano()), 0, "0", "60 s"); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{"set policy", true, func(ctx context.Context, p *lockPair) error {
		// Every job filed anew (another expiry), and every rate bucket full again.
		pol := lockPolicy
		pol.ExpireAfter += time.Duration(p.b.localNow().UnixNano()%1000+1) * time.Millisecond
		return p.b.SetPolicy(ctx, pol)
	}},
}

// writeAll runs puts (backend.PutParams) and deletes (deletion) in one write batch, as calls
// arriving together make it (with both, lock_tubes first); a delete that finds nothing is no
// error.
func writeAll(ctx context.Context, b *Backend, ws ...any) error {
	items := make([]write, len(ws))
	for i, w := range ws {
		switch w := w.(type) {
		case backend.PutParams:
			items[i].put = b.newPutItem(w)
		case deletion:
			items[i].del = &deleteItem{session: backend.SessionID(w.session), id: uint64(w.id)}
		}
	}
	errs := make([]error, len(items))
	b.writes.DoAll(ctx, items, make([]writeResult, len(items)), errs)
	return errors.Join(errs...)
}

// lockPolicy governs every tube of TestNoTwoWritesDeadlock where policies are in force: every
// policy variant of the statements, and the policy tick, without holding anything back (the
// limits are far above what the rounds reach).
var lockPolicy = backend.Policy{Tube: "*", ExpireAfter: time.Hour, MaxReserves: 1000, MaxReserved: 1000,
	Unique: true, Rate: 10000, Burst: 10000}

// putAll puts a job into each of tubes in one write batch.
func putAll(ctx context.Context, b *Backend, tubes []string, delay time.Duration) error {
	ps := make([]backend.PutParams, len(tubes))
	for i, tube := range tubes {
		ps[i] = backend.PutParams{Tube: tube, Delay: delay, TTR: time.Minute, Body: []byte(fmt.Sprintf("%s %d", tube, time.Now().UnixNano()))}
	}
	for _, r := range b.PutBatch(ctx, ps) {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// both runs f and g at once and returns their errors, the ones a client may get anyway left out
// (the other side took the job first, nothing to reserve).
func both(f, g func() error) error {
	errs := make(chan error, 2)
	go func() { errs <- f() }()
	go func() { errs <- g() }()
	return errors.Join(expected(<-errs), expected(<-errs))
}

func expected(err error) error {
	if errors.Is(err, backend.ErrNotFound) || errors.Is(err, backend.ErrTimedOut) || errors.Is(err, backend.ErrDeadlineSoon) {
		return nil
	}
	return err
}

// Any two writes, of two gateways at once, never deadlock: every statement takes its row locks
// in the one order the README documents (jobs by id, then tubes by name, then the counters row),
// so no cycle of waits can form. Left to chance, two writes rarely meet inside the fraction of a
// millisecond a cycle needs; so a holder transaction first locks one row both may take (a tube,
// the counters row, a job), one write starts and queues behind it (or finishes without it), then
// the other, and the holder lets go: the first in the queue goes on while the second may hold
// what the first needs next. Every pair runs so, for each held row and in both orders, on
// connections whose deadlock_timeout is 10 ms: a cycle is broken at once, and its victim's error
// (which the Backend retries silently) fails the test, as does a lock still waited for 200 ms
// after the holder let go. The clock moves two minutes a round, so each round also finds delayed
// jobs due and reservations run out.
func TestNoTwoWritesDeadlock(t *testing.T) {
	if testing.Short() {
		t.Skip("every pair of writes, for each held row, in both orders")
	}
	for _, policies := range []bool{false, true} {
		t.Run(fmt.Sprintf("policies=%v", policies), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			schema := testSchema(t)
			clock := clocktest.NewFake(time.Now())
			var mu sync.Mutex
			var deadlocks []string
			open := func(app string) *Backend {
				opts := testOptions(schema, clock)
				sep := "?"
				if strings.Contains(opts.DSN, "?") {
					sep = "&"
				}
				// (deadlock_timeout is a superuser's setting: the test server's user is one.)
				opts.DSN += sep + "deadlock_timeout=10ms&application_name=" + app
				b, err := New(ctx, opts)
				require.NoError(t, err)
				t.Cleanup(func() { _ = b.Close() })
				retried := func(err error) {
					mu.Lock()
					defer mu.Unlock()
					deadlocks = append(deadlocks, err.Error())
				}
				b.retried.Store(&retried)
				return b
			}
			apps := []string{"lockorder0_" + schema, "lockorder1_" + schema}
			gw := []*Backend{open(apps[0]), open(apps[1])}
			if policies {
				require.NoError(t, gw[0].SetPolicy(ctx, lockPolicy))
				for _, b := range gw {
					require.Eventually(t, b.policiesActive, 5*time.Second, 10*time.Millisecond)
				}
			}
			for _, tube := range []string{"b", "a"} { // b first: a scan of tubes meets it first
				_, err := gw[0].Put(ctx, backend.PutParams{Tube: tube, TTR: time.Minute, Body: []byte("first " + tube)})
				require.NoError(t, err)
			}
			tbl := pgx.Identifier{schema}.Sanitize()
			holds := []struct {
				name string
				lock func(p *lockPair) string
			}{
				{"tube a", func(*lockPair) string { return "SELECT 1 FROM " + tbl + ".tubes WHERE name = 'a' FOR UPDATE" }},
				{"counters", func(*lockPair) string { return "SELECT 1 FROM " + tbl + ".counters FOR UPDATE" }},
				{"a ready job", func(p *lockPair) string {
					return fmt.Sprintf("SELECT 1 FROM %s.jobs WHERE id = %d FOR UPDATE", tbl, p.ready[0])
				}},
			}
			if policies {
				holds = append(holds, struct {
					name string
					lock func(p *lockPair) string
				}{"a's rate bucket", func(*lockPair) string { return "SELECT 1 FROM " + tbl + ".tube_rates WHERE tube = 'a' FOR UPDATE" }})
			}
			round := 0
			for i, x := range lockOps {
				for _, y := range lockOps[i:] {
					if (x.policies || y.policies) && !policies {
						continue
					}
					for _, h := range holds {
						for _, order := range [][2]int{{0, 1}, {1, 0}} {
							if x.name == y.name && order[0] == 1 {
								continue // the same two writes
							}
							round++
							name := fmt.Sprintf("%s ↔ %s, %s held, %s first", x.name, y.name, h.name, []string{x.name, y.name}[order[0]])
							sides := setUpLockPair(t, ctx, gw, round)
							holder, err := admin(t).Begin(ctx)
							require.NoError(t, err)
							defer func() { _ = holder.Rollback(ctx) }()
							_, err = holder.Exec(ctx, h.lock(sides[0]))
							require.NoError(t, err)
							ops := []func(context.Context, *lockPair) error{x.run, y.run}
							done := []chan error{make(chan error, 1), make(chan error, 1)}
							for _, k := range order {
								go func() { done[k] <- expected(ops[k](ctx, sides[k])) }()
								waitUntilBlocked(t, apps[k], done[k])
							}
							released := time.Now()
							require.NoError(t, holder.Rollback(ctx))
							stalled := stallWatch(t, apps, released, 200*time.Millisecond)
							for k := range done {
								err := <-done[k]
								if err != errBlockedDone {
									require.NoError(t, err, name)
								}
							}
							require.Empty(t, stalled(), "%s: a lock was still waited for 200 ms after the holder let go", name)
							mu.Lock()
							found := deadlocks
							deadlocks = nil
							mu.Unlock()
							require.Empty(t, found, "%s: deadlocked", name)
							clock.Advance(2 * time.Minute)
							if round%8 == 0 {
								// The rounds' jobs go, so that a round's writes cost what the first's did.
								for _, tube := range []string{"a", "b"} {
									for _, state := range []backend.State{backend.Ready, backend.Delayed, backend.Buried} {
										_, err := gw[0].DeleteJobs(ctx, tube, state, 1000)
										require.NoError(t, err)
									}
								}
							}
						}
					}
				}
			}
		})
	}
}

// errBlockedDone stands in, on a write's channel, for the outcome waitUntilBlocked took from it.
var errBlockedDone = errors.New("done before the holder let go")

// waitUntilBlocked returns once a connection named app waits for a lock, or its write is done
// (its outcome then put back, or errBlockedDone if nil), or a second has passed.
func waitUntilBlocked(t *testing.T, app string, done chan error) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			if err == nil {
				err = errBlockedDone
			}
			done <- err
			return
		default:
		}
		var waiting bool
		err := admin(t).QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock')", app).Scan(&waiting)
		require.NoError(t, err)
		if waiting {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// stallWatch samples, until the test's writes are checked, the lock waits of the connections
// named apps; the function it returns reports those still waited for limit after released
// (a wait begun later counts from its start).
func stallWatch(t *testing.T, apps []string, released time.Time, limit time.Duration) func() []string {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			rows, err := admin(t).Query(ctx, `SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
				WHERE NOT l.granted AND a.application_name = ANY($1) AND greatest(l.waitstart, $2) < clock_timestamp() - $3::interval`,
				apps, released, limit.String())
			if err == nil {
				for rows.Next() {
					var query string
					if rows.Scan(&query) == nil {
						mu.Lock()
						seen = append(seen, query)
						mu.Unlock()
					}
				}
				rows.Close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() []string {
		cancel()
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// setUpLockPair gives each gateway a session holding a job in each of tubes a and b, and puts
// ready, delayed and buried jobs both sides share.
func setUpLockPair(t *testing.T, ctx context.Context, gw []*Backend, round int) []*lockPair {
	t.Helper()
	var ps []backend.PutParams
	for i, tube := range []string{"b", "b", "a", "a", "b", "b", "a", "a", "a", "b", "a", "b", "a"} {
		delay := time.Duration(0)
		if i%2 == 1 && i < 8 || i == 0 {
			delay = time.Minute
		}
		ps = append(ps, backend.PutParams{Tube: tube, Delay: delay, TTR: time.Minute,
			Body: []byte(fmt.Sprintf("%d %d", round, i))})
	}
	var ids []uint64
	for _, r := range gw[0].PutBatch(ctx, ps) {
		require.NoError(t, r.Err)
		ids = append(ids, r.ID)
	}
	// ids: ready and delayed pairs in b, a, b, a; then a, b to hold for each side, and a to bury.
	// The first is made ready last, so that its row lies after the second's: a plan that meets
	// rows in physical order meets them out of id order.
	require.NoError(t, gw[0].KickJob(ctx, ids[0]))
	shared := lockPair{ready: []uint64{ids[0], ids[2], ids[4], ids[6]}, delayed: []uint64{ids[1], ids[3], ids[5], ids[7]}}
	sides := make([]*lockPair, len(gw))
	errs := make(chan error, len(gw))
	for k, b := range gw { // each side on its own gateway, at once
		p := shared
		p.b, p.session = b, backend.SessionID(fmt.Sprintf("lockorder.%d.%d", round, k))
		p.held = ids[8+2*k : 10+2*k]
		sides[k] = &p
		go func() {
			err := b.BeginSession(ctx, p.session, backend.SessionInfo{})
			for _, id := range p.held {
				if err == nil {
					_, err = b.ReserveJob(ctx, p.session, id)
				}
			}
			errs <- err
		}()
	}
	for range gw {
		require.NoError(t, <-errs)
	}
	_, err := gw[0].ReserveJob(ctx, sides[0].session, ids[12])
	require.NoError(t, err)
	require.NoError(t, gw[0].Bury(ctx, sides[0].session, ids[12], 0))
	for _, p := range sides {
		p.buried = ids[12]
	}
	return sides
}
