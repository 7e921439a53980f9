package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// beangate migrate as an operator runs it: a locked binlog refused (exit 10), --dry-run per
// tube and state with --tubes, then the move into a binlog directory with its report.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	srcDir, dstDir := t.TempDir(), t.TempDir()
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0, "-b", srcDir)
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c := beanstalk.NewConn(nc)
	defer c.Close()
	for i, tube := range []string{"email-a", "email-a", "email-b", "other"} {
		tb := beanstalk.NewTube(c, tube)
		_, err := tb.Put([]byte(fmt.Sprintf("job %d", i)), 1, 0, 60)
		require.NoError(t, err)
	}
	_, err = beanstalk.NewTube(c, "email-b").Put([]byte("later"), 1, 3600e9, 60)
	require.NoError(t, err)

	exit, _, stderr := runArgs(t, "migrate", "--from", "binlog:"+srcDir, "--to", "binlog:"+dstDir)
	require.Equal(t, exitLocked, exit)
	require.Contains(t, stderr, "in use by a running server")

	exit, stdout, _ := runArgs(t, "migrate", "--from", "beanstalk://"+addr, "--dry-run", "--tubes", "email-*")
	require.Equal(t, exitOK, exit)
	require.Regexp(t, `email-a\s+2\s+0\s+0\s+0\s+-`, stdout)
	require.Regexp(t, `email-b\s+1\s+1\s+0\s+0\s+-`, stdout)
	require.NotContains(t, stdout, "other")

	exit, stdout, stderr = runArgs(t, "migrate", "--from", "beanstalk://"+addr, "--to", "binlog:"+dstDir, "--tubes", "email-*")
	require.Equal(t, exitOK, exit, stderr)
	require.Contains(t, stdout, "moved:            4 (ids kept: 4, ids changed: 0)")
	require.Contains(t, stderr, "migrate: progress") // plain lines: stderr is not a terminal

	left, err := c.Stats()
	require.NoError(t, err)
	require.Equal(t, "1", left["current-jobs-ready"], "the other tube stays")
	require.Equal(t, "0", left["current-jobs-delayed"])
	b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: dstDir}})
	require.NoError(t, err)
	defer b.Close()
	st, err := b.Stats(context.Background())
	require.NoError(t, err)
	require.Equal(t, [2]uint64{3, 1}, [2]uint64{st.ReadyJobs, st.DelayedJobs})
}

// putJobs puts bodies on tube of the beanstalk server at addr and returns their ids.
func putJobs(t *testing.T, addr, tube string, bodies ...string) []uint64 {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c := beanstalk.NewConn(nc)
	defer c.Close()
	tb := beanstalk.NewTube(c, tube)
	var ids []uint64
	for _, b := range bodies {
		id, err := tb.Put([]byte(b), 1, 0, 60)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// A destination URL that can never work is bad configuration (exit 5), as for the server.
func TestMigrateToABadStoreURLIsBadConfiguration(t *testing.T) {
	t.Parallel()
	for _, to := range []string{"redis://127.0.0.1:6379/0?prefx=a", "postgres://127.0.0.1/test?command_timeout=abc", "memory://foo"} {
		t.Run(to, func(t *testing.T) {
			t.Parallel()
			exit, _, stderr := runArgs(t, "migrate", "--from", "binlog:"+t.TempDir(), "--to", to, "--progress", "none")
			require.Equal(t, exitUsage, exit, stderr)
			require.Contains(t, stderr, "beangate: migrate: opening ")
		})
	}
}

// --dry-run with --to checks the destination and moves nothing: it is reached, its settings
// judged (Redis persistence and eviction, the PostgreSQL schema), and the source's ids it holds
// already are named. Each destination first takes two jobs of another beanstalkd, whose ids
// (1, 2) the source's jobs (1, 2, 3) then collide with. The source's version names the
// --compat to serve with.
func TestMigrateDryRunChecksTheDestination(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.DebianBeanstalkd(t)
	tests := []struct {
		name string
		to   func(t *testing.T) string
		want []string // regular expressions the dry run's output matches
	}{
		{name: "binlog directory", to: func(t *testing.T) string { return "binlog:" + t.TempDir() },
			want: []string{`ok: +reachable: .*, a binlog directory no server holds`}},
		{name: "redis", to: func(t *testing.T) string { u, _ := redisStore(t); return u },
			want: []string{`ok: +reachable: Redis \d`, `(ok|WARNING): +maxmemory-policy`, `(ok|WARNING): +AOF`}},
		{name: "postgres", to: func(t *testing.T) string { u, _ := postgresStore(t); return u },
			want: []string{`ok: +reachable: PostgreSQL \d+`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			to := tt.to(t)
			other := gatewaytest.StartBeanstalkd(t, bin, 0)
			putJobs(t, other, "a", "a1", "a2")
			exit, _, stderr := runArgs(t, "migrate", "--from", "beanstalk://"+other, "--to", to)
			require.Equal(t, exitOK, exit, stderr)

			src := gatewaytest.StartBeanstalkd(t, bin, 0)
			require.Equal(t, []uint64{1, 2, 3}, putJobs(t, src, "b", "b1", "b2", "b3"))
			exit, stdout, stderr := runArgs(t, "migrate", "--from", "beanstalk://"+src, "--to", to, "--dry-run")
			require.Equal(t, exitOK, exit, stderr)
			for _, w := range append(tt.want,
				`compat: the source is beanstalkd 1\.12: serve beangate with --compat 1\.12`,
				`jobs: +2 there now`,
				`ids: +2 source jobs whose ids the destination holds already will get new ids`,
				`id 1: at the source tube b \(ready\), at the destination tube a \(ready\)`,
				`id 2: at the source tube b \(ready\), at the destination tube a \(ready\)`) {
				require.Regexp(t, w, stdout)
			}
			require.NotContains(t, stdout, "id 3:")
			left, err := beanstalk.NewConn(mustDial(t, src)).Stats()
			require.NoError(t, err)
			require.Equal(t, "3", left["current-jobs-ready"], "a dry run moves nothing")
		})
	}
}

func mustDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// A destination the dry run cannot reach or use fails it: exit 1 (10 for a binlog directory a
// server holds), saying why; one it can use but that is empty or not yet set up passes.
func TestMigrateDryRunFailsOnAnUnusableDestination(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.DebianBeanstalkd(t)
	src := gatewaytest.StartBeanstalkd(t, bin, 0)
	putJobs(t, src, "b", "b1")
	locked := t.TempDir()
	gatewaytest.StartBeanstalkd(t, bin, 0, "-b", locked)
	tests := []struct {
		name   string
		to     func(t *testing.T) string
		exit   int
		stdout string // a regular expression
	}{
		{name: "redis unreachable", to: func(*testing.T) string { return "redis://127.0.0.1:1/0" },
			exit: exitFailure, stdout: `(?s)FAILED: +unreachable: .*connection refused`},
		{name: "postgres unreachable", to: func(*testing.T) string { return "postgres://postgres@127.0.0.1:1/test" },
			exit: exitFailure, stdout: `(?s)FAILED: +unreachable: .*connection refused`},
		{name: "beanstalk unreachable", to: func(*testing.T) string { return "beanstalk://127.0.0.1:1" },
			exit: exitFailure, stdout: `(?s)FAILED: +unreachable: .*connection refused`},
		{name: "binlog directory a server holds", to: func(*testing.T) string { return "binlog:" + locked },
			exit: exitLocked, stdout: `FAILED: +.*locked`},
		{name: "postgres schema not created yet", to: func(t *testing.T) string { u, _ := postgresStore(t); return u },
			exit: exitOK, stdout: `ok: +schema cmdtest_\w+ does not exist yet: the run creates it`},
		{name: "postgres role that may not create the schema", to: postgresRoleWithoutCreate,
			exit: exitFailure, stdout: `FAILED: .*cmdtest_\w+ lacks CREATE on the database, which migrations need`},
		{name: "binlog directory not created yet", to: func(t *testing.T) string { return "binlog:" + t.TempDir() + "/new" },
			exit: exitOK, stdout: `ok: +\S+/new does not exist yet: the run creates it`},
		{name: "beanstalk server", to: func(t *testing.T) string { return "beanstalk://" + gatewaytest.StartBeanstalkd(t, bin, 0) },
			exit: exitOK, stdout: `WARNING: a beanstalk server gives every job a new id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exit, stdout, stderr := runArgs(t, "migrate", "--from", "beanstalk://"+src, "--to", tt.to(t), "--dry-run")
			require.Equal(t, tt.exit, exit, "stdout: %s\nstderr: %s", stdout, stderr)
			require.Regexp(t, tt.stdout, stdout)
		})
	}
}

// postgresRoleWithoutCreate is a store URL for a fresh login role of its own, which has no
// CREATE on the database (removed after the test).
func postgresRoleWithoutCreate(t *testing.T) string {
	t.Helper()
	store, _ := postgresStore(t)
	u, err := url.Parse(store)
	require.NoError(t, err)
	admin := *u
	q := admin.Query()
	q.Del("schema") // ours, not pgx's
	admin.RawQuery = q.Encode()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin.String())
	require.NoError(t, err)
	role := randomName("cmdtest_")
	_, err = conn.Exec(ctx, "CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" LOGIN")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+pgx.Identifier{role}.Sanitize())
		_ = conn.Close(context.Background())
	})
	u.User = url.User(role)
	return u.String()
}
