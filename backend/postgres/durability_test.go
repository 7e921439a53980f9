package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A commit probe records, for every change to a job row, the transaction that committed it and
// the synchronous_commit it committed with. It is a deferred constraint trigger: it fires at
// COMMIT, after every statement of the transaction, so a set_config('synchronous_commit', 'off')
// anywhere in the transaction (the way reserve and touch skip their WAL flush) shows. A crash
// test can only catch an asynchronous commit if the crash lands inside the WAL writer's delay;
// this sees every one.
type probeRow struct {
	txid  int64
	op    string // INSERT, UPDATE, DELETE
	id    int64
	state int16 // the row's state after the change (0 for DELETE)
	sync  string
}

func installCommitProbe(t *testing.T, ctx context.Context, schema string) {
	t.Helper()
	q := pgx.Identifier{schema}.Sanitize()
	_, err := admin(t).Exec(ctx, strings.NewReplacer("{{schema}}", q).Replace(`
		CREATE TABLE {{schema}}.commit_probe (txid bigint, op text, id bigint, state smallint, sync text);
		CREATE FUNCTION {{schema}}.commit_probe() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF TG_OP = 'DELETE' THEN
				INSERT INTO {{schema}}.commit_probe
				VALUES (txid_current(), TG_OP, OLD.id, 0, current_setting('synchronous_commit'));
			ELSE
				INSERT INTO {{schema}}.commit_probe
				VALUES (txid_current(), TG_OP, NEW.id, NEW.state, current_setting('synchronous_commit'));
			END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER commit_probe AFTER INSERT OR UPDATE OR DELETE ON {{schema}}.jobs
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {{schema}}.commit_probe();`))
	require.NoError(t, err)
}

// takeProbe returns the rows recorded since the last call and forgets them.
func takeProbe(t *testing.T, ctx context.Context, schema string) []probeRow {
	t.Helper()
	rows, err := admin(t).Query(ctx, "DELETE FROM "+pgx.Identifier{schema}.Sanitize()+".commit_probe RETURNING txid, op, id, state, sync")
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (probeRow, error) {
		var p probeRow
		err := r.Scan(&p.txid, &p.op, &p.id, &p.state, &p.sync)
		return p, err
	})
	require.NoError(t, err)
	return out
}

// withParam adds a query parameter to a URL DSN.
func withParam(dsn, kv string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + kv
	}
	return dsn + "?" + kv
}

// TestAcknowledgedWritesCommitSynchronously: an acknowledged put, delete, release, bury or kick
// is committed with synchronous_commit on (its commit waited for the WAL flush), also on a server
// whose default is off; reserve and touch, which need no durability, are the control cases that
// show the probe does see an asynchronous commit.
func TestAcknowledgedWritesCommitSynchronously(t *testing.T) {
	t.Parallel()
	// "off" stands for a server (or role, or database) whose default is synchronous_commit = off:
	// the startup option sets it on the session, as such a default would.
	for _, serverDefault := range []string{"on", "off"} {
		t.Run("ServerDefault_"+serverDefault, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			schema := testSchema(t)
			opts := testOptions(schema, nil)
			if serverDefault == "off" {
				opts.DSN = withParam(opts.DSN, "options=-c%20synchronous_commit%3Doff")
				plain, err := pgx.Connect(ctx, opts.DSN)
				require.NoError(t, err)
				var got string
				require.NoError(t, plain.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got))
				require.NoError(t, plain.Close(ctx))
				require.Equal(t, "off", got, "the DSN must simulate a server default of off")
			}
			b, err := New(ctx, opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			installCommitProbe(t, ctx, schema)
			s := backend.SessionID("durable.1")
			require.NoError(t, b.BeginSession(ctx, s, backend.SessionInfo{}))

			put := func(tube string, delay time.Duration) uint64 {
				id, err := b.Put(ctx, backend.PutParams{Tube: tube, Delay: delay, TTR: time.Minute, Body: []byte("x")})
				require.NoError(t, err)
				return id
			}
			reserved := func(tube string) uint64 {
				id := put(tube, 0)
				_, err := b.ReserveJob(ctx, s, id)
				require.NoError(t, err)
				return id
			}
			buried := func(tube string) uint64 {
				id := reserved(tube)
				require.NoError(t, b.Bury(ctx, s, id, 0))
				return id
			}
			cases := []struct {
				name     string
				prepare  func(tube string) uint64 // not probed
				act      func(tube string, id uint64) error
				wantSync string
			}{
				{"Put", nil, func(tube string, _ uint64) error { put(tube, 0); return nil }, "on"},
				{"PutDelayed", nil, func(tube string, _ uint64) error { put(tube, time.Hour); return nil }, "on"},
				{"Delete", func(tube string) uint64 { return put(tube, 0) },
					func(_ string, id uint64) error { return b.Delete(ctx, s, id) }, "on"},
				{"DeleteReserved", reserved,
					func(_ string, id uint64) error { return b.Delete(ctx, s, id) }, "on"},
				{"Release", reserved, func(_ string, id uint64) error {
					return b.Release(ctx, backend.ReleaseParams{Session: s, ID: id})
				}, "on"},
				{"ReleaseDelayed", reserved, func(_ string, id uint64) error {
					return b.Release(ctx, backend.ReleaseParams{Session: s, ID: id, Delay: time.Hour})
				}, "on"},
				{"Bury", reserved, func(_ string, id uint64) error { return b.Bury(ctx, s, id, 0) }, "on"},
				{"KickBuried", buried, func(tube string, _ uint64) error { _, err := b.Kick(ctx, tube, 10); return err }, "on"},
				{"KickDelayed", func(tube string) uint64 { return put(tube, time.Hour) },
					func(tube string, _ uint64) error { _, err := b.Kick(ctx, tube, 10); return err }, "on"},
				{"KickJob", buried, func(_ string, id uint64) error { return b.KickJob(ctx, id) }, "on"},
				// Controls: these skip the WAL flush on purpose, and the probe must see it.
				{"ReserveIsAsynchronous", func(tube string) uint64 { return put(tube, 0) }, func(tube string, _ uint64) error {
					_, err := b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{tube}})
					return err
				}, "off"},
				{"TouchIsAsynchronous", reserved, func(_ string, id uint64) error { return b.Touch(ctx, s, id) }, "off"},
			}
			for _, c := range cases {
				// One backend, one session: the cases run one after the other, each in its tube.
				t.Run(c.name, func(t *testing.T) {
					tube := "durable-" + strings.ToLower(c.name)
					var id uint64
					if c.prepare != nil {
						id = c.prepare(tube)
					}
					takeProbe(t, ctx, schema)
					require.NoError(t, c.act(tube, id))
					got := takeProbe(t, ctx, schema)
					require.NotEmpty(t, got, "the command changed no job row")
					for _, p := range got {
						require.Equal(t, c.wantSync, p.sync, "job %d (%s) committed with synchronous_commit=%s", p.id, p.op, p.sync)
					}
				})
			}
		})
	}
}

// TestConcurrentCommandsShareTransactions: puts, reserves and deletes arriving together from
// many sessions are committed in fewer transactions than there are commands (group commit), and
// the grouped puts and deletes still commit synchronously.
func TestConcurrentCommandsShareTransactions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	schema := testSchema(t)
	b := newTestBackend(t, nil, schema)
	installCommitProbe(t, ctx, schema)
	const sessions, rounds = 24, 5
	start := make(chan struct{})
	errs := make(chan error, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := backend.SessionID(fmt.Sprintf("group.%d", i))
			err := b.BeginSession(ctx, s, backend.SessionInfo{})
			<-start
			for r := 0; r < rounds && err == nil; r++ {
				if _, err = b.Put(ctx, backend.PutParams{Tube: "default", TTR: time.Minute, Body: []byte("x")}); err != nil {
					break
				}
				var job *backend.Job
				// Every reserve follows its own put, so each one eventually gets a job.
				if job, err = b.Reserve(ctx, backend.ReserveParams{Session: s, Tubes: []string{"default"}, Timeout: 5 * time.Second}); err != nil {
					break
				}
				err = b.Delete(ctx, s, job.ID)
			}
			errs <- err
		}()
	}
	takeProbe(t, ctx, schema)
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	commands := map[string]int{}
	txids := map[string]map[int64]bool{}
	for _, p := range takeProbe(t, ctx, schema) {
		kind := p.op
		if p.op == "UPDATE" && p.state == int16(backend.Reserved) {
			kind = "RESERVE"
		} else if p.op == "UPDATE" {
			continue
		}
		if kind != "RESERVE" {
			require.Equal(t, "on", p.sync, "an acknowledged %s committed asynchronously", kind)
		}
		commands[kind]++
		if txids[kind] == nil {
			txids[kind] = map[int64]bool{}
		}
		txids[kind][p.txid] = true
	}
	for _, kind := range []string{"INSERT", "RESERVE", "DELETE"} {
		require.Equal(t, sessions*rounds, commands[kind], kind)
		t.Logf("%d %s commands in %d transactions", commands[kind], kind, len(txids[kind]))
		require.Less(t, len(txids[kind]), commands[kind], "no two concurrent %s commands shared a transaction", kind)
	}
}
