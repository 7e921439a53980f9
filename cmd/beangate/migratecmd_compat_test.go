package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// migrate names the --compat that matches its source, and it is the one that makes a
// go-beanstalk program read stats-job's tube from beangate as it read it from Debian's
// beanstalkd 1.12; the default 1.13 hands it the name in quotes.
func TestMigrateNamesTheCompatThatKeepsWhatClientsRead(t *testing.T) {
	t.Parallel()
	src := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	c := beanstalk.NewConn(mustDial(t, src))
	id, err := beanstalk.NewTube(c, "newcomer").Put([]byte("hello"), 1, 0, time.Minute)
	require.NoError(t, err)
	st, err := c.StatsJob(id)
	require.NoError(t, err)
	fromSource := st["tube"]
	require.Equal(t, "newcomer", fromSource)

	exit, stdout, _ := runArgs(t, "migrate", "--from", "beanstalk://"+src, "--dry-run")
	require.Equal(t, exitOK, exit)
	m := regexp.MustCompile(`compat: the source is beanstalkd 1\.12: serve beangate with --compat (\S+),`).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	advised := m[1]
	dir := t.TempDir()
	exit, stdout, stderr := runArgs(t, "migrate", "--from", "beanstalk://"+src, "--to", "binlog:"+dir)
	require.Equal(t, exitOK, exit, stderr)
	require.Contains(t, stdout, "compat:           the source is beanstalkd 1.12: serve beangate with --compat "+advised)

	tests := []struct {
		name string
		args []string
		tube string
	}{
		{name: "the advised --compat", args: []string{"--compat", advised}, tube: fromSource},
		{name: "the default", tube: `"newcomer"`},
	}
	for _, tt := range tests {
		// In turn: one server at a time holds the binlog directory (each stops with its subtest).
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, append([]string{"-l", "127.0.0.1", "-p", "0", "-b", dir}, tt.args...)...)
			c := beanstalk.NewConn(mustDial(t, s.addr.String()))
			st, err := c.StatsJob(id)
			require.NoError(t, err)
			require.Equal(t, tt.tube, st["tube"])
		})
	}
}
