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
