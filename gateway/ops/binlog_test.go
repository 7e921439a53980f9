//go:build linux

package ops_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// breakFile makes the descriptor the process holds on path refer to /dev/null opened with flag
// instead, as a failing disk would: read-only, every write fails (EBADF); write-only, writes
// succeed and every fsync fails (EINVAL). dup3 swaps it in place, so no other file can take the
// descriptor's number meanwhile.
func breakFile(t *testing.T, path string, flag int) {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, flag, 0)
	require.NoError(t, err)
	defer null.Close()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); target == path {
			var fd int
			_, err := fmt.Sscan(e.Name(), &fd)
			require.NoError(t, err)
			require.NoError(t, syscall.Dup3(int(null.Fd()), fd, 0))
			return
		}
	}
	t.Fatalf("no descriptor holds %s", path)
}

// With a binlog, its figures are on /metrics (parsed by Prometheus's text parser) and move as
// jobs are written; a write the OS refuses moves the write error counter, and only it.
func TestBinlogMetricsMoveAndCountAFailedWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startBinlogServer(t, dir)
	c := gatewaytest.Dial(t, s.addr)
	m := scrape(t, s.http)
	written := value(m, "beangate_binlog_written_bytes_total", nil)
	syncs := value(m, "beangate_binlog_fsync_duration_seconds", nil)
	for range 3 {
		c.Do("put 0 0 60 5\r\nhello\r\n", "INSERTED {n}\r\n")
	}
	c.Do("delete 1\r\n", "DELETED\r\n")

	m = scrape(t, s.http)
	require.Equal(t, 4.0, value(m, "beangate_binlog_records_written_total", nil))
	full := float64(binlog.FullSize(len("default"), len("hello")))
	require.Equal(t, written+3*full+binlog.ShortSize, value(m, "beangate_binlog_written_bytes_total", nil))
	require.Equal(t, 2*full, value(m, "beangate_binlog_live_bytes", nil))
	require.Equal(t, 2.0, value(m, "beangate_binlog_files", nil), "binlog.1 and the one made ahead")
	require.Eventually(t, func() bool { // the file made ahead is zero-filled in the background
		return value(scrape(t, s.http), "beangate_binlog_disk_bytes", nil) == 2<<20
	}, 5e9, 1e7)
	require.GreaterOrEqual(t, value(m, "beangate_binlog_fsync_duration_seconds", nil), syncs+4, "-f0: one fsync per command")
	require.Equal(t, 0.0, value(m, "beangate_binlog_errors_total", labels{"op": "write"}))
	require.Equal(t, 0.0, value(m, "beangate_binlog_errors_total", labels{"op": "fsync"}))

	breakFile(t, filepath.Join(dir, "binlog.1"), os.O_RDONLY)
	c.Do("put 0 0 60 5\r\nhello\r\n", "INTERNAL_ERROR\r\n")
	m = scrape(t, s.http)
	require.Equal(t, 1.0, value(m, "beangate_binlog_errors_total", labels{"op": "write"}))
	require.Equal(t, 0.0, value(m, "beangate_binlog_errors_total", labels{"op": "fsync"}))
}

// An fsync the OS refuses moves the fsync error counter, and its round is timed too.
func TestBinlogMetricsCountAFailedFsync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startBinlogServer(t, dir)
	c := gatewaytest.Dial(t, s.addr)
	c.Do("put 0 0 60 5\r\nhello\r\n", "INSERTED 1\r\n")
	syncs := value(scrape(t, s.http), "beangate_binlog_fsync_duration_seconds", nil)

	breakFile(t, filepath.Join(dir, "binlog.1"), os.O_WRONLY)
	c.Do("put 0 0 60 5\r\nhello\r\n", "INTERNAL_ERROR\r\n")
	m := scrape(t, s.http)
	require.Equal(t, 1.0, value(m, "beangate_binlog_errors_total", labels{"op": "fsync"}))
	require.Equal(t, 0.0, value(m, "beangate_binlog_errors_total", labels{"op": "write"}))
	require.Equal(t, syncs+1, value(m, "beangate_binlog_fsync_duration_seconds", nil))
}

// Without a binlog there are no binlog series at all.
func TestNoBinlogNoBinlogMetrics(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{})
	m := scrape(t, s.http)
	for name := range m {
		require.NotContains(t, name, "beangate_binlog_")
	}
}
