package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// sqlPutGateway starts a gateway (real TCP) on a Backend of schema, with MaxJobSize when > 0;
// its reserves are woken only by notifications (no poll), so a job found comes from a wake-up.
func sqlPutGateway(t *testing.T, schema string, maxJobSize int) (*Backend, string) {
	t.Helper()
	opts := testOptions(schema, nil)
	opts.MaxJobSize = maxJobSize
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	b.poll = time.Hour
	addr, _ := gatewaytest.StartServer(t, b, gateway.Config{})
	return b, addr
}

// dialBeanstalk is a go-beanstalk client of the gateway at addr, closed at cleanup.
func dialBeanstalk(t *testing.T, addr string) *beanstalk.Conn {
	t.Helper()
	c, err := beanstalk.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// appConn is an application's connection to the test database, as role user ("" for the
// URL's own), closed at cleanup.
func appConn(t *testing.T, user string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(testURL())
	require.NoError(t, err)
	if user != "" {
		cfg.User = user
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// sqlPut calls schema.put with named arguments as an application would; a string body goes to
// the text overload, a []byte to the bytea one.
func sqlPut(ctx context.Context, q querier, schema, tube string, body any, pri int64, delay, ttr string) (uint64, error) {
	cast := "text"
	if _, ok := body.([]byte); ok {
		cast = "bytea"
	}
	var id int64
	err := q.QueryRow(ctx, "SELECT "+pgx.Identifier{schema}.Sanitize()+".put(tube => $1, body => $2::"+cast+
		", priority => $3, delay => $4::interval, ttr => $5::interval)", tube, body, pri, delay, ttr).Scan(&id)
	return uint64(id), err
}

// storeFigures are the figures of stats that the store keeps (not the gateway's own counters).
func storeFigures(t *testing.T, c *beanstalk.Conn) map[string]string {
	t.Helper()
	all, err := c.Stats()
	require.NoError(t, err)
	out := map[string]string{}
	for _, k := range []string{"current-jobs-urgent", "current-jobs-ready", "current-jobs-reserved",
		"current-jobs-delayed", "current-jobs-buried", "total-jobs", "current-tubes"} {
		out[k] = all[k]
	}
	return out
}

// A job put with SQL reaches a reserve already waiting on a gateway (another gateway than the
// one whose Backend is asked, in one case) within 50 ms of the commit, and not before it.
func TestSQLPutCommitWakesAWaitingReserve(t *testing.T) {
	cases := []struct {
		name      string
		body      any
		gateways  int // the reserve waits on the last
		wantBody  []byte
		wantFirst bool
	}{
		{"TextBody", "héllo", 1, []byte("héllo"), true},
		{"ByteaBody", []byte{0, 1, 2, 0xff, '\r', '\n'}, 1, []byte{0, 1, 2, 0xff, '\r', '\n'}, true},
		{"OnEitherOfTwoGateways", "two", 2, []byte("two"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema := testSchema(t)
			var b *Backend
			var addr string
			for range c.gateways {
				b, addr = sqlPutGateway(t, schema, 0)
			}
			ctx := testCtx(t)
			worker := dialBeanstalk(t, addr)
			type got struct {
				id   uint64
				body []byte
				err  error
				at   time.Time
			}
			done := make(chan got, 1)
			go func() {
				id, body, err := beanstalk.NewTubeSet(worker, "emails").Reserve(5 * time.Second)
				done <- got{id, body, err, time.Now()}
			}()
			require.Eventually(t, func() bool { return b.waiters.waiting("emails") }, 5*time.Second, time.Millisecond)

			app := appConn(t, "")
			tx, err := app.Begin(ctx)
			require.NoError(t, err)
			id, err := sqlPut(ctx, tx, schema, "emails", c.body, 1024, "0", "60 s")
			require.NoError(t, err)
			select {
			case g := <-done:
				t.Fatalf("a reserve got %v (%v) before the put's transaction committed", g.id, g.err)
			case <-time.After(200 * time.Millisecond):
			}
			require.NoError(t, tx.Commit(ctx))
			committed := time.Now()
			g := <-done
			require.NoError(t, g.err)
			require.Equal(t, id, g.id)
			require.Equal(t, c.wantBody, g.body)
			took := g.at.Sub(committed)
			t.Logf("reserved %v after the commit returned", took)
			require.Less(t, took, 50*time.Millisecond)
			st, err := beanstalk.NewTube(dialBeanstalk(t, addr), "emails").Stats()
			require.NoError(t, err)
			require.Equal(t, []string{"1", "1"}, []string{st["current-jobs-reserved"], st["total-jobs"]})
		})
	}
}

// A rolled-back put leaves no job, no tube and no count behind: stats are as before, the ids
// are found nowhere, and a waiting reserve is not woken. Rolled back to a savepoint, only the
// puts after it go.
func TestSQLPutRolledBackLeavesNothing(t *testing.T) {
	cases := []struct {
		name string
		// run puts in tx and ends it; returns the ids that must not exist and those that must
		run func(t *testing.T, ctx context.Context, tx pgx.Tx, schema string) (gone, kept []uint64)
	}{
		{"Rollback", func(t *testing.T, ctx context.Context, tx pgx.Tx, schema string) (gone, kept []uint64) {
			for _, tube := range []string{"emails", "default", "emails"} {
				id, err := sqlPut(ctx, tx, schema, tube, "x", 1024, "0", "60 s")
				require.NoError(t, err)
				gone = append(gone, id)
			}
			id, err := sqlPut(ctx, tx, schema, "emails", "later", 1024, "10 s", "60 s")
			require.NoError(t, err)
			require.NoError(t, tx.Rollback(ctx))
			return append(gone, id), nil
		}},
		{"RollbackToSavepoint", func(t *testing.T, ctx context.Context, tx pgx.Tx, schema string) (gone, kept []uint64) {
			id, err := sqlPut(ctx, tx, schema, "default", "kept", 1024, "0", "60 s")
			require.NoError(t, err)
			kept = append(kept, id)
			_, err = tx.Exec(ctx, "SAVEPOINT s")
			require.NoError(t, err)
			id, err = sqlPut(ctx, tx, schema, "emails", "gone", 1024, "0", "60 s")
			require.NoError(t, err)
			gone = append(gone, id)
			_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
			require.NoError(t, err)
			require.NoError(t, tx.Commit(ctx))
			return gone, kept
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema := testSchema(t)
			b, addr := sqlPutGateway(t, schema, 0)
			ctx := testCtx(t)
			client := dialBeanstalk(t, addr)
			_, err := beanstalk.NewTube(client, "default").Put([]byte("there before"), 1, 0, time.Minute)
			require.NoError(t, err)

			worker := dialBeanstalk(t, addr)
			woken := make(chan error, 1)
			go func() {
				_, _, err := beanstalk.NewTubeSet(worker, "emails").Reserve(time.Second)
				woken <- err
			}()
			require.Eventually(t, func() bool { return b.waiters.waiting("emails") }, 5*time.Second, time.Millisecond)
			before := storeFigures(t, client) // with the tube the worker watches

			app := appConn(t, "")
			tx, err := app.Begin(ctx)
			require.NoError(t, err)
			gone, kept := c.run(t, ctx, tx, schema)

			require.ErrorIs(t, <-woken, beanstalk.ErrTimeout, "a reserve found a job of a rolled-back put")
			after := storeFigures(t, client)
			want := before
			if n := len(kept); n > 0 {
				want = map[string]string{}
				for k, v := range before {
					want[k] = v
				}
				for _, k := range []string{"current-jobs-ready", "total-jobs"} {
					var v int
					_, err := fmt.Sscan(before[k], &v)
					require.NoError(t, err)
					want[k] = fmt.Sprint(v + n)
				}
			}
			require.Equal(t, want, after)
			for _, id := range gone {
				_, err := client.Peek(id)
				require.ErrorIs(t, err, beanstalk.ErrNotFound, "job %d", id)
			}
			for _, id := range kept {
				_, err := client.Peek(id)
				require.NoError(t, err, "job %d", id)
			}
			st, err := beanstalk.NewTube(client, "emails").Stats()
			require.NoError(t, err)
			require.Equal(t, []string{"0", "0"}, []string{st["current-jobs-ready"], st["total-jobs"]})
			var pending int
			require.NoError(t, admin(t).QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".sql_puts").Scan(&pending))
			require.Zero(t, pending)
		})
	}
}

// Eight connections putting with SQL (two tubes per transaction, in the order opposite to the
// gateways' lock order) and eight putting through the gateway, while two workers reserve and
// delete: every id is distinct and increasing per producer, every job is delivered once with
// its body, no statement deadlocked, and the counts come back to nothing (the tubes are
// collected, so their job counts were right).
func TestSQLPutsAndGatewayPutsTogether(t *testing.T) {
	const producers, perProducer = 8, 40
	schema := testSchema(t)
	b, addr := sqlPutGateway(t, schema, 0)
	b.poll = pollInterval // workers also wait between waves of puts
	var deadlocks sync.Map
	retried := func(err error) { deadlocks.Store(err.Error(), true) }
	b.retried.Store(&retried)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // 640 jobs on a busy machine
	defer cancel()

	var mu sync.Mutex
	put := map[uint64]string{} // id → body
	record := func(id uint64, body string) error {
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := put[id]; dup {
			return fmt.Errorf("id %d given to %q and %q", id, prev, body)
		}
		put[id] = body
		return nil
	}
	tubes := []string{"mix-b", "mix-a"}
	var conns []*beanstalk.Conn // the gateway's clients
	var wg sync.WaitGroup
	errs := make(chan error, 2*producers+2)
	for p := range producers {
		app := appConn(t, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				var last uint64
				for i := 0; i < perProducer; i += 2 {
					tx, err := app.Begin(ctx)
					if err != nil {
						return err
					}
					for k, tube := range tubes {
						body := fmt.Sprintf("sql-%d-%d", p, i+k)
						id, err := sqlPut(ctx, tx, schema, tube, body, int64(k), "0", "60 s")
						if err != nil {
							return err
						}
						if id <= last {
							return fmt.Errorf("sql producer %d: id %d after %d", p, id, last)
						}
						last = id
						if err := record(id, body); err != nil {
							return err
						}
					}
					if err := tx.Commit(ctx); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
		c := dialBeanstalk(t, addr)
		conns = append(conns, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				var last uint64
				for i := range perProducer {
					body := fmt.Sprintf("gw-%d-%d", p, i)
					id, err := beanstalk.NewTube(c, tubes[i%2]).Put([]byte(body), 1, 0, time.Minute)
					if err != nil {
						return err
					}
					if id <= last {
						return fmt.Errorf("gateway producer %d: id %d after %d", p, id, last)
					}
					last = id
					if err := record(id, body); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	const total = 2 * producers * perProducer
	var dmu sync.Mutex
	delivered := map[uint64]string{}
	var workers sync.WaitGroup
	for range 2 {
		c := dialBeanstalk(t, addr)
		conns = append(conns, c)
		workers.Add(1)
		go func() {
			defer workers.Done()
			errs <- func() error {
				ts := beanstalk.NewTubeSet(c, tubes...)
				for {
					dmu.Lock()
					n := len(delivered)
					dmu.Unlock()
					if n == total {
						return nil
					}
					id, body, err := ts.Reserve(time.Second)
					if errors.Is(err, beanstalk.ErrTimeout) {
						if ctx.Err() != nil {
							return fmt.Errorf("%d of %d jobs delivered", n, total)
						}
						continue
					}
					if err != nil {
						return err
					}
					dmu.Lock()
					_, twice := delivered[id]
					delivered[id] = string(body)
					dmu.Unlock()
					if twice {
						return fmt.Errorf("job %d delivered twice", id)
					}
					if err := c.Delete(id); err != nil {
						return err
					}
				}
			}()
		}()
	}
	wg.Wait()
	workers.Wait()
	for _, c := range conns {
		_ = c.Close() // the tubes they use and watch are then collected
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, put, total)
	require.Equal(t, put, map[uint64]string(delivered))
	var seen []string
	deadlocks.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
	require.Empty(t, seen, "statements retried after a deadlock or serialization failure")

	client := dialBeanstalk(t, addr)
	require.Eventually(t, func() bool {
		f := storeFigures(t, client)
		return f["total-jobs"] == fmt.Sprint(total) && f["current-jobs-ready"] == "0" && f["current-tubes"] == "1"
	}, 5*time.Second, 50*time.Millisecond, "figures: %v", storeFigures(t, client))
	left, err := client.ListTubes()
	require.NoError(t, err)
	require.Equal(t, []string{"default"}, left)
	// Collected, not merely hidden: a tube row whose job count went wrong stays (list-tubes and
	// stats do not show a tube with a count below one).
	var rows int
	require.NoError(t, admin(t).QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".tubes WHERE name <> 'default'").Scan(&rows))
	require.Zero(t, rows, "tube rows left")
}

// A role granted USAGE on the schema and EXECUTE on put, and nothing else, puts jobs (text and
// bytea) and can neither read nor change any table, nor call put's trigger; without EXECUTE it
// cannot put.
func TestSQLPutRoleWithOnlyExecute(t *testing.T) {
	schema := testSchema(t)
	_, addr := sqlPutGateway(t, schema, 0)
	ctx := testCtx(t)
	q := pgx.Identifier{schema}.Sanitize()
	grantee, outsider := schema+"_app", schema+"_other"
	pool := admin(t)
	for _, role := range []string{grantee, outsider} {
		r := pgx.Identifier{role}.Sanitize()
		_, err := pool.Exec(ctx, "CREATE ROLE "+r+" LOGIN; GRANT USAGE ON SCHEMA "+q+" TO "+r)
		require.NoError(t, err)
		t.Cleanup(func() { // before the schema is dropped (cleanups run last first)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := pool.Exec(ctx, "DROP OWNED BY "+r+"; DROP ROLE "+r)
			require.NoError(t, err)
		})
	}
	// What docs/postgresql.md says to grant.
	_, err := pool.Exec(ctx, "GRANT EXECUTE ON FUNCTION "+q+".put(text, text, bigint, interval, interval), "+
		q+".put(text, bytea, bigint, interval, interval) TO "+pgx.Identifier{grantee}.Sanitize())
	require.NoError(t, err)

	client := dialBeanstalk(t, addr)
	app := appConn(t, grantee)
	for _, body := range []any{"as text", []byte("as bytea")} {
		id, err := sqlPut(ctx, app, schema, "emails", body, 7, "0", "60 s")
		require.NoError(t, err)
		got, err := client.Peek(id)
		require.NoError(t, err)
		want, ok := body.([]byte)
		if !ok {
			want = []byte(body.(string))
		}
		require.Equal(t, want, got, "job %d", id)
	}

	forbidden := []string{
		"SELECT * FROM " + q + ".jobs",
		"UPDATE " + q + ".jobs SET priority = 0",
		"DELETE FROM " + q + ".jobs",
		"INSERT INTO " + q + ".jobs (id, tube, state, priority, delay_us, ttr_us, created_at, body) VALUES (999, 'x', 1, 0, 0, 1000000, now(), '')",
		"SELECT * FROM " + q + ".tubes",
		"UPDATE " + q + ".tubes SET jobs_count = 0",
		"UPDATE " + q + ".counters SET total_jobs = 0",
		"SELECT * FROM " + q + ".sessions",
		"SELECT * FROM " + q + ".policies",
		"SELECT * FROM " + q + ".tube_policy('emails')",
		"UPDATE " + q + ".settings SET value = 1",
		"INSERT INTO " + q + ".sql_puts (tube, woke) VALUES ('emails', true)",
		"SELECT nextval('" + q + ".job_ids')",
		"SELECT " + q + ".sql_puts_commit()",
	}
	for _, stmt := range forbidden {
		_, err := app.Exec(ctx, stmt)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, stmt)
		require.Equal(t, "42501", pgErr.Code, "%s: %v", stmt, err) // insufficient_privilege
	}

	_, err = sqlPut(ctx, appConn(t, outsider), schema, "emails", "no grant", 7, "0", "60 s")
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "42501", pgErr.Code, "%v", err)
}

// put refuses what the protocol refuses, each with its SQLSTATE and a message saying what is
// wrong, and takes what it takes (a TTR under a second is made one second, as by beanstalkd).
// The body limit is the -z the gateway recorded.
func TestSQLPutChecksItsArguments(t *testing.T) {
	const maxJobSize = 16
	schema := testSchema(t)
	_, addr := sqlPutGateway(t, schema, maxJobSize)
	ctx := testCtx(t)
	client := dialBeanstalk(t, addr)
	app := appConn(t, "")
	long := strings.Repeat("t", 200)
	cases := []struct {
		name             string
		tube             string
		body             any
		pri              int64
		delay, ttr       string
		wantCode, wantIn string // wantCode "": accepted
		wantPri, wantTTR string // stats-job of an accepted job
	}{
		{"LongestName", long, "x", 0, "0", "1 s", "", "", "0", "1"},
		{"NameTooLong", long + "t", "x", 0, "0", "1 s", "22023", "bad tube name", "", ""},
		{"EmptyName", "", "x", 0, "0", "1 s", "22023", "bad tube name", "", ""},
		{"NameStartsWithDash", "-x", "x", 0, "0", "1 s", "22023", "bad tube name", "", ""},
		{"NameWithSpace", "a b", "x", 0, "0", "1 s", "22023", "bad tube name", "", ""},
		{"NameNotASCII", "é", "x", 0, "0", "1 s", "22023", "bad tube name", "", ""},
		{"EveryNameCharacter", "aZ09-+/;.$_()", "x", 0, "0", "1 s", "", "", "0", "1"},
		{"HighestPriority", "p", "x", 4294967295, "0", "1 s", "", "", "4294967295", "1"},
		{"PriorityTooHigh", "p", "x", 4294967296, "0", "1 s", "22023", "priority 4294967296 is not within", "", ""},
		{"NegativePriority", "p", "x", -1, "0", "1 s", "22023", "priority -1 is not within", "", ""},
		{"NegativeDelay", "d", "x", 0, "-1 s", "1 s", "22023", "delay -00:00:01 is not within", "", ""},
		{"DelayTooLong", "d", "x", 0, "4294967296 s", "1 s", "22023", "delay", "", ""},
		{"NegativeTTR", "r", "x", 0, "0", "-1 s", "22023", "ttr -00:00:01 is not within", "", ""},
		{"ZeroTTRIsOneSecond", "r", "x", 0, "0", "0", "", "", "0", "1"},
		{"SubsecondTTRIsOneSecond", "r", "x", 0, "0", "0.4 s", "", "", "0", "1"},
		{"TTRTooLong", "r", "x", 0, "0", "4294967296 s", "22023", "ttr", "", ""},
		{"LongestBody", "b", strings.Repeat("b", maxJobSize), 0, "0", "1 s", "", "", "0", "1"},
		{"BodyTooBig", "b", strings.Repeat("b", maxJobSize+1), 0, "0", "1 s", "54000", "body of 17 bytes is over the gateways' max-job-size, 16 bytes", "", ""},
		{"BodyTooBigInUTF8", "b", strings.Repeat("é", maxJobSize/2) + "x", 0, "0", "1 s", "54000", "body of 17 bytes", "", ""},
		{"NullBody", "b", nil, 0, "0", "1 s", "22004", "must not be NULL", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := sqlPut(ctx, app, schema, c.tube, c.body, c.pri, c.delay, c.ttr)
			if c.wantCode != "" {
				var pgErr *pgconn.PgError
				require.ErrorAs(t, err, &pgErr)
				require.Equal(t, c.wantCode, pgErr.Code, "%v", err)
				require.Contains(t, pgErr.Message, c.wantIn)
				require.True(t, strings.HasPrefix(pgErr.Message, "beangate put: "), pgErr.Message)
				return
			}
			require.NoError(t, err)
			st, err := client.StatsJob(id)
			require.NoError(t, err)
			require.Equal(t, `"`+c.tube+`"`, st["tube"]) // quoted, as by beanstalkd
			require.Equal(t, c.wantPri, st["pri"])
			require.Equal(t, c.wantTTR, st["ttr"])
		})
	}
}

// The tube's policy applies to a SQL put as to a gateway's: under unique, a body already ready or
// delayed in the tube — put by SQL or by a gateway, committed or in a transaction still open —
// stores nothing and gives that job's id (a put that comes second waits for the first's
// transaction); under expire-after the job expires; under max-reserved a second worker waits.
func TestSQLPutAppliesTubePolicies(t *testing.T) {
	schema := testSchema(t)
	b, addr := sqlPutGateway(t, schema, 0)
	b.poll = pollInterval
	ctx := testCtx(t)
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "uniq-*", Unique: true}))
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "short", ExpireAfter: time.Second}))
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "capped", MaxReserved: 1}))
	require.NoError(t, b.SetPolicy(ctx, backend.Policy{Tube: "told", History: true}))
	client := dialBeanstalk(t, addr)

	t.Run("Unique", func(t *testing.T) {
		cases := []struct {
			name string
			end  func(tx pgx.Tx) error // how the first put's transaction ends
			same bool                  // the later puts get the first's id
		}{
			{"FirstCommits", func(tx pgx.Tx) error { return tx.Commit(ctx) }, true},
			{"FirstRollsBack", func(tx pgx.Tx) error { return tx.Rollback(ctx) }, false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				tube := "uniq-" + c.name
				first, second := appConn(t, ""), appConn(t, "")
				tx, err := first.Begin(ctx)
				require.NoError(t, err)
				id, err := sqlPut(ctx, tx, schema, tube, "same", 0, "0", "60 s")
				require.NoError(t, err)
				again, err := sqlPut(ctx, tx, schema, tube, []byte("same"), 0, "0", "60 s")
				require.NoError(t, err)
				require.Equal(t, id, again, "a duplicate in the same transaction")

				sqlGot, gwGot := make(chan uint64, 1), make(chan uint64, 1)
				go func() {
					id, err := sqlPut(ctx, second, schema, tube, "same", 0, "0", "60 s")
					if err != nil {
						t.Error(err)
					}
					sqlGot <- id
				}()
				gw := dialBeanstalk(t, addr)
				go func() {
					id, err := beanstalk.NewTube(gw, tube).Put([]byte("same"), 0, 0, time.Minute)
					if err != nil {
						t.Error(err)
					}
					gwGot <- id
				}()
				time.Sleep(300 * time.Millisecond) // both wait for the first's transaction
				require.Empty(t, sqlGot)
				require.Empty(t, gwGot)
				require.NoError(t, c.end(tx))
				s, g := <-sqlGot, <-gwGot
				if c.same {
					require.Equal(t, []uint64{id, id}, []uint64{s, g})
				} else {
					require.NotEqual(t, id, s)
					require.Equal(t, s, g, "the SQL put and the gateway's put of one body")
				}
				st, err := beanstalk.NewTube(client, tube).Stats()
				require.NoError(t, err)
				require.Equal(t, "1", st["current-jobs-ready"])
				require.Equal(t, "1", st["total-jobs"])

				gwID, err := beanstalk.NewTube(client, tube).Put([]byte("from the gateway"), 0, 0, time.Minute)
				require.NoError(t, err)
				fromSQL, err := sqlPut(ctx, second, schema, tube, "from the gateway", 0, "0", "60 s")
				require.NoError(t, err)
				require.Equal(t, gwID, fromSQL, "a SQL put of a body the gateway put")
			})
		}
	})

	t.Run("UniqueNeedsReadCommitted", func(t *testing.T) {
		tx, err := appConn(t, "").BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = sqlPut(ctx, tx, schema, "uniq-rr", "x", 0, "0", "60 s")
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "25000", pgErr.Code)
		require.Contains(t, pgErr.Message, "needs a READ COMMITTED transaction (this one is REPEATABLE READ)")
	})

	t.Run("ExpireAfter", func(t *testing.T) {
		id, err := sqlPut(ctx, appConn(t, ""), schema, "short", "x", 0, "0", "60 s")
		require.NoError(t, err)
		_, err = client.Peek(id)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := client.Peek(id)
			return errors.Is(err, beanstalk.ErrNotFound)
		}, 5*time.Second, 50*time.Millisecond, "the job outlived its tube's expire-after")
	})

	// A SQL put into a tube that keeps histories starts the job's history as a gateway's put
	// does, naming the application's role and its connection's address.
	t.Run("History", func(t *testing.T) {
		id, err := sqlPut(ctx, appConn(t, ""), schema, "told", "x", 0, "2 s", "60 s")
		require.NoError(t, err)
		events, err := b.JobHistory(ctx, id)
		require.NoError(t, err)
		require.Len(t, events, 1)
		var role string
		require.NoError(t, appConn(t, "").QueryRow(ctx, "SELECT session_user").Scan(&role))
		require.Equal(t, backend.EventPut, events[0].Kind)
		require.Equal(t, backend.SessionID("sql:"+role), events[0].Session)
		require.Contains(t, events[0].Addr, "127.0.0.1:")
		require.Equal(t, 2*time.Second, events[0].Delay)
	})

	t.Run("MaxReserved", func(t *testing.T) {
		app := appConn(t, "")
		for range 2 {
			_, err := sqlPut(ctx, app, schema, "capped", "x", 0, "0", "60 s")
			require.NoError(t, err)
		}
		_, _, err := beanstalk.NewTubeSet(dialBeanstalk(t, addr), "capped").Reserve(time.Second)
		require.NoError(t, err)
		_, _, err = beanstalk.NewTubeSet(dialBeanstalk(t, addr), "capped").Reserve(time.Second)
		require.ErrorIs(t, err, beanstalk.ErrTimeout, "a second reservation in a tube capped at one")
	})
}

// An application's transaction that has put jobs and stays open holds no gateway back: puts
// into the same tube and others, reserves and deletes through the gateway go on meanwhile (the
// tube and counter rows are taken only at its COMMIT), and the counts are right once it commits.
func TestSQLPutOpenTransactionHoldsNoGatewayBack(t *testing.T) {
	schema := testSchema(t)
	_, addr := sqlPutGateway(t, schema, 0)
	ctx := testCtx(t)
	client := dialBeanstalk(t, addr)
	tx, err := appConn(t, "").Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	for _, tube := range []string{"emails", "default"} {
		_, err := sqlPut(ctx, tx, schema, tube, "in the open transaction", 0, "0", "60 s")
		require.NoError(t, err)
	}

	steps := []struct {
		name string
		run  func() error
	}{
		{"PutSameTube", func() error {
			_, err := beanstalk.NewTube(client, "emails").Put([]byte("g"), 0, 0, time.Minute)
			return err
		}},
		{"PutOtherTube", func() error {
			_, err := beanstalk.NewTube(client, "other").Put([]byte("g"), 0, 0, time.Minute)
			return err
		}},
		{"ReserveAndDelete", func() error {
			id, _, err := beanstalk.NewTubeSet(client, "emails").Reserve(0)
			if err != nil {
				return err
			}
			return client.Delete(id)
		}},
		{"Stats", func() error { _, err := client.Stats(); return err }},
	}
	for _, s := range steps {
		done := make(chan error, 1)
		go func() { done <- s.run() }()
		select {
		case err := <-done:
			require.NoError(t, err, s.name)
		case <-time.After(time.Second):
			t.Fatalf("%s waited for the application's open transaction", s.name)
		}
	}
	require.NoError(t, tx.Commit(ctx))
	st, err := beanstalk.NewTube(client, "emails").Stats()
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2"}, []string{st["current-jobs-ready"], st["total-jobs"]})
	f := storeFigures(t, client)
	require.Equal(t, []string{"3", "4"}, []string{f["current-jobs-ready"], f["total-jobs"]})
}
