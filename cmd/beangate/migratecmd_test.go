package main

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/beanstalkd/go-beanstalk"
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
