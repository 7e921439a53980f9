package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// With -b, jobs outlive the process: a graceful stop truncates the current file to what it
// holds (as beanstalkd does), and the next start replays the directory before serving.
func TestBinlogKeepsJobsAcrossAGracefulRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, "-p", "0", "-b", dir, "-f0", "-s", "65536")
	c := dial(t, s.addr)
	require.Equal(t, "INSERTED 1\r\n", c.roundTrip(t, "put 3 0 10 5\r\nhello\r\n"))
	s.signals <- syscall.SIGTERM
	require.Equal(t, exitOK, s.waitExit(t, 10*time.Second))
	info, err := os.Stat(filepath.Join(dir, "binlog.1"))
	require.NoError(t, err)
	require.Less(t, info.Size(), int64(65536), "truncated to its records on a clean stop")

	s = startServer(t, "-p", "0", "-b", dir)
	require.Contains(t, s.stderr.String(), "binlog: replayed")
	c = dial(t, s.addr)
	require.Equal(t, "FOUND 1 5\r\n", c.roundTrip(t, "peek 1\r\n"))
	body, err := c.r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "hello\r\n", body)
	require.Equal(t, "INSERTED 2\r\n", c.roundTrip(t, "put 0 0 1 1\r\nx\r\n"), "ids go on after the replayed ones")
}

// A second server on one directory is refused, whichever comes first, with beanstalkd's exit
// status 10.
func TestBinlogDirectoryLockIsBeanstalkds(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.DebianBeanstalkd(t)

	t.Run("beanstalkd holds it", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd := exec.Command(bin, "-l", "127.0.0.1", "-p", strconv.Itoa(freePort(t)), "-b", dir)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		require.Eventually(t, func() bool {
			_, err := os.Stat(filepath.Join(dir, "binlog.1"))
			return err == nil
		}, 5*time.Second, 10*time.Millisecond)
		exit, _, stderr := runArgs(t, "-p", "0", "-b", dir)
		require.Equal(t, exitLocked, exit)
		require.Contains(t, stderr, "locked by another server")
		for _, tool := range []string{"inspect", "compact"} {
			exit, _, stderr = runArgs(t, "binlog", tool, dir)
			require.Equal(t, exitLocked, exit)
			require.Contains(t, stderr, "in use by a running server")
		}
	})

	t.Run("beangate holds it", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		startServer(t, "-p", "0", "-b", dir)
		cmd := exec.Command(bin, "-l", "127.0.0.1", "-p", strconv.Itoa(freePort(t)), "-b", dir)
		err := cmd.Run()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr)
		require.Equal(t, 10, exitErr.ExitCode())
		require.Equal(t, 10, exitLocked)
	})
}

// freePort is a local TCP port where nothing listens now (a connection is refused).
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The operator tools: inspect reports a stopped server's directory; compact shrinks it to its
// live jobs, which the next server finds unchanged, ids going on where they were. (Both refuse
// a directory a running server holds: TestBinlogDirectoryLockIsBeanstalkds, since fcntl locks
// do not exclude the process that holds them.)
func TestBinlogInspectAndCompact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, "-p", "0", "-b", dir, "-s", "1024")
	c := dial(t, s.addr)
	for i := range 40 {
		require.Equal(t, "INSERTED "+strconv.Itoa(i+1)+"\r\n", c.roundTrip(t, "put 5 0 10 3\r\nabc\r\n"))
	}
	require.Equal(t, "USING other\r\n", c.roundTrip(t, "use other\r\n"))
	require.Equal(t, "INSERTED 41\r\n", c.roundTrip(t, "put 5 100 10 3\r\nxyz\r\n"))
	require.Equal(t, "INSERTED 42\r\n", c.roundTrip(t, "put 5 0 10 3\r\nxyz\r\n"))
	for i := 2; i <= 42; i++ {
		if i == 41 {
			continue
		}
		require.Equal(t, "DELETED\r\n", c.roundTrip(t, "delete "+strconv.Itoa(i)+"\r\n"))
	}
	s.signals <- syscall.SIGTERM
	require.Equal(t, exitOK, s.waitExit(t, 10*time.Second))

	exit, stdout, stderr := runArgs(t, "binlog", "inspect", dir)
	require.Equal(t, exitOK, exit, stderr)
	require.Contains(t, stdout, "jobs: 2 live, next id 43")
	require.Regexp(t, `default\s+1\s+0\s+0`, stdout)
	require.Regexp(t, `other\s+0\s+1\s+0`, stdout)

	exit, stdout, stderr = runArgs(t, "binlog", "compact", dir)
	require.Equal(t, exitOK, exit, stderr)
	require.Contains(t, stdout, "-> 1 file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "lock and one binlog file")

	s = startServer(t, "-p", "0", "-b", dir)
	c = dial(t, s.addr)
	require.Equal(t, "FOUND 1 3\r\n", c.roundTrip(t, "peek 1\r\n"))
	_, _ = c.r.ReadString('\n')
	require.Equal(t, "FOUND 41 3\r\n", c.roundTrip(t, "peek 41\r\n"))
	_, _ = c.r.ReadString('\n')
	require.Equal(t, "INSERTED 43\r\n", c.roundTrip(t, "put 0 0 1 1\r\nx\r\n"), "the deleted highest id is not reused")
}
