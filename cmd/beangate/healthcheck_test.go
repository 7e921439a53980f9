package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// healthcheckRun runs `beangate healthcheck ARGS` with process 1's command line standing as
// pid1 (nil: process 1 is no beangate).
func healthcheckRun(t *testing.T, pid1 []string, args ...string) (exit int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	p := process{stdout: &out, stderr: &errOut, commands: subcommands(), pid1Cmdline: func() []string { return pid1 }}
	exit = p.run(context.Background(), append([]string{"healthcheck"}, args...))
	return exit, out.String(), errOut.String()
}

func portOf(t *testing.T, a net.Addr) string {
	t.Helper()
	_, port, err := net.SplitHostPort(a.String())
	require.NoError(t, err)
	return port
}

// The health check follows /readyz (or /healthz with --live) of the listener the server's own
// options name, over real HTTP.
func TestHealthcheckAsksTheOpsListener(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0")
	s.requireReadyz(t, http.StatusOK, "ready")
	ops := s.opsAddr.String()
	// The metrics listener is bound before the beanstalk one, so it is up once startServer is.
	metricsArgs := []string{"--metrics-http", "127.0.0.1:" + strconv.Itoa(freePort(t))}
	startServer(t, append([]string{"-p", "0"}, metricsArgs...)...)
	anyInterface := startServer(t, "-p", "0", "--http", "0.0.0.0:0")

	tests := []struct {
		name       string
		pid1       []string
		args       []string
		wantExit   int
		wantStdout string
		wantStderr string
	}{
		{"Ready", nil, []string{"--http", ops}, exitOK, "ready\n", ""},
		{"MetricsListener", nil, metricsArgs, exitOK, "ready\n", ""},
		{"AllInterfacesReachedOnLoopback", nil, []string{"--http", "0.0.0.0:" + portOf(t, anyInterface.opsAddr)}, exitOK, "ready\n", ""},
		{"Process1Options", []string{"/beangate", "-l", "127.0.0.1", "--http", ops}, nil, exitOK, "ready\n", ""},
		{"Process1OptionsWithLive", []string{"/beangate", "--http", ops}, []string{"--live"}, exitOK, "ok\n", ""},
		{"Process1IsNoBeangate", []string{"/sbin/tini", "--", "/beangate", "--http", ops}, nil, exitFailure, "", "no ops listener"},
		{"Process1IsACommand", []string{"/beangate", "ctl", "stats"}, nil, exitFailure, "", "no ops listener"},
		{"NoOpsListener", nil, []string{"-p", "11300"}, exitFailure, "", "no ops listener"},
		{"AnyFreePort", nil, []string{"--http", "127.0.0.1:0"}, exitFailure, "", "port 0"},
		{"NothingListens", nil, []string{"--http", "127.0.0.1:" + strconv.Itoa(freePort(t))}, exitFailure, "", "connection refused"},
		{"BadOption", nil, []string{"--nope"}, exitUsage, "", "unknown flag: --nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exit, stdout, stderr := healthcheckRun(t, tt.pid1, tt.args...)
			require.Equal(t, tt.wantExit, exit, stderr)
			require.Equal(t, tt.wantStdout, stdout)
			require.Contains(t, stderr, tt.wantStderr)
		})
	}
}

// A draining gateway is unhealthy to the readiness check and still alive to --live.
func TestHealthcheckFailsWhileNotReady(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "--http", "127.0.0.1:0")
	s.requireReadyz(t, http.StatusOK, "ready")
	s.signals <- syscall.SIGUSR1
	s.requireReadyz(t, http.StatusServiceUnavailable, "draining")
	exit, stdout, stderr := healthcheckRun(t, nil, "--http", s.opsAddr.String())
	require.Equal(t, exitFailure, exit)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "/readyz: 503 draining")
	exit, stdout, _ = healthcheckRun(t, nil, "--live", "--http", s.opsAddr.String())
	require.Equal(t, exitOK, exit)
	require.Equal(t, "ok\n", stdout)
}
