package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunExitStatusAndUsage(t *testing.T) {
	tests := []struct {
		args       []string
		want       int
		wantStdout string
		wantStderr string
	}{
		{nil, 2, "", "usage: lab floor"},
		{[]string{"-h"}, 0, "usage: lab floor", ""},
		{[]string{"bogus"}, 2, "", `unknown experiment "bogus"`},
		{[]string{"floor"}, 2, "", "-store is required"},
		{[]string{"floor", "-h"}, 0, "", "-ops"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		require.Equal(t, tt.want, run(tt.args, &stdout, &stderr), "lab %v", tt.args)
		require.Contains(t, stdout.String(), tt.wantStdout, "lab %v", tt.args)
		require.Contains(t, stderr.String(), tt.wantStderr, "lab %v", tt.args)
	}
}
