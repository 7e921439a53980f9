package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMigrateDBNeedsAPostgresBackend(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"migrate-db", "--backend", "memory://"}, &stdout, &stderr)
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr.String(), "migrate-db needs a postgres://")
}

// A subcommand's -h prints its own usage and exits 0; it is never taken for an argument.
func TestSubcommandHelp(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"migrate-db", "-h"}, "Usage: beangate migrate-db"},
		{[]string{"migrate-db", "--help"}, "Usage: beangate migrate-db"},
		{[]string{"binlog", "inspect", "-h"}, "Usage: beangate binlog inspect DIR"},
		{[]string{"binlog", "-h"}, "Usage: beangate binlog inspect DIR"},
		{[]string{"healthcheck", "-h"}, "Usage: beangate healthcheck"},
		{[]string{"healthcheck", "--live", "--help"}, "Usage: beangate healthcheck"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			require.Equal(t, exitOK, code, stderr.String())
			require.True(t, strings.HasPrefix(stdout.String(), tt.want), stdout.String())
			require.Empty(t, stderr.String())
		})
	}
}

// migrate-db reads the server's flags: its help names --config (-c is beanstalkd's removed
// flag there), and a usage error points to its own help.
func TestMigrateDBHelpAndUsage(t *testing.T) {
	t.Parallel()
	exit, stdout, _ := runArgs(t, "migrate-db", "--help")
	require.Equal(t, exitOK, exit)
	require.Contains(t, stdout, "YAML file given with --config (or BEANGATE_CONFIG)")
	require.NotContains(t, stdout, "-c config")
	for _, args := range [][]string{{"migrate-db", "--nope"}, {"migrate-db", "-c", "/etc/beangate.yaml"}} {
		exit, _, stderr := runArgs(t, args...)
		require.Equal(t, exitUsage, exit)
		require.Regexp(t, `^beangate: [^\n]+\nTry 'beangate migrate-db --help' for more information.\n$`, stderr)
	}
}

// A mistaken migrate command line says what was wrong in one line and where the usage is; help
// asked for prints the whole usage on stdout.
func TestMigrateHelpAndUsage(t *testing.T) {
	t.Parallel()
	exit, stdout, _ := runArgs(t, "migrate", "--help")
	require.Equal(t, exitOK, exit)
	require.Contains(t, stdout, "Usage: beangate migrate --from SRC --to DST")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"migrate", "--nope"}, "unknown flag: --nope"},
		{[]string{"migrate", "--to", "memory://"}, "--from is required"},
		{[]string{"migrate", "--from", "beanstalk://127.0.0.1:1"}, "--to is required"},
		{[]string{"migrate", "--from", "beanstalk://127.0.0.1:1", "--dry-run", "extra"}, `unexpected argument "extra"`},
	} {
		exit, _, stderr := runArgs(t, c.args...)
		require.Equal(t, exitUsage, exit, stderr)
		require.Regexp(t, `^beangate migrate: [^\n]+\nTry 'beangate migrate --help' for more information.\n$`, stderr)
		require.Contains(t, stderr, c.says)
	}
}
