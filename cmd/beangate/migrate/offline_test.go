package migrate

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// startBeanstalkdOn runs bin on binlog directory dir; stop kills it (SIGKILL, as a crash).
func startBeanstalkdOn(t *testing.T, bin, dir string) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	cmd := exec.Command(bin, "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-b", dir)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop = func() { _ = cmd.Process.Signal(syscall.SIGKILL); <-exited }
	t.Cleanup(stop)
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return addr, stop
		}
		require.True(t, time.Now().Before(deadline), "beanstalkd did not start")
		time.Sleep(10 * time.Millisecond)
	}
}

// From a binlog directory written by Debian's beanstalkd (killed, as in a crash) into each
// store: every live job, with its id, tube, state, priority, TTR and body as the server had
// them and the counters its binlog recorded; the job a worker held comes back ready. A second
// run moves nothing (every key is known), and a directory a server holds is refused.
func TestOfflineFromBeanstalkdBinlogIntoEachStore(t *testing.T) {
	bin := gatewaytest.DebianBeanstalkd(t)
	dir := t.TempDir()
	addr, stop := startBeanstalkdOn(t, bin, dir)
	want, _ := populate(t, addr, 0)

	_, err := OpenSource(context.Background(), "binlog:"+dir, "", false, testLog(t))
	require.True(t, errors.Is(err, binlog.ErrLocked), "a directory a server holds is refused: %v", err)
	stop()
	recorded, err := binlog.ReadDir(dir, binlog.ReadOptions{})
	require.NoError(t, err)
	require.Len(t, recorded.Jobs, len(want))

	// --dry-run's plan: each tube's jobs by the state they come back in (reserved: ready).
	byTube := map[string]TubePlan{}
	for _, j := range want {
		p := byTube[j.tube]
		p.Tube = j.tube
		switch j.state {
		case "delayed":
			p.Delayed++
		case "buried":
			p.Buried++
		default:
			p.Ready++
		}
		byTube[j.tube] = p
	}
	src, err := OpenSource(context.Background(), "binlog:"+dir, "", false, testLog(t))
	require.NoError(t, err)
	plan, err := src.Plan(context.Background())
	require.NoError(t, err)
	require.NoError(t, src.Close())
	require.Equal(t, slices.SortedFunc(maps.Values(byTube), func(a, b TubePlan) int { return strings.Compare(a.Tube, b.Tube) }), plan)

	for _, st := range allStores(t) {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for run := 1; run <= 2; run++ {
				src, err := OpenSource(ctx, "binlog:"+dir, "", false, testLog(t))
				require.NoError(t, err)
				dst := st.dest(t)
				rep, err := Run(ctx, src, dst, Options{Log: testLog(t), Batch: 4})
				require.NoError(t, err)
				require.NoError(t, dst.Close())
				require.NoError(t, src.Close())
				if run == 1 {
					require.Equal(t, uint64(len(want)), rep.IDsKept)
				} else {
					require.Zero(t, rep.Moved)
					require.Equal(t, uint64(len(want)), rep.AlreadyImported)
					var out bytes.Buffer
					rep.Print(&out)
					require.Contains(t, out.String(), "already imported by an earlier run (the source is left as it was)")
				}
			}
			b := st.open(t)
			defer b.Close()
			for _, r := range recorded.Jobs {
				got := fromStore(t, b, r.ID)
				requireSame(t, want[r.ID], got, false)
				require.Equal(t, [5]uint64{uint64(r.Reserves), uint64(r.Timeouts), uint64(r.Releases), uint64(r.Buries), uint64(r.Kicks)},
					[5]uint64{got.reserves, got.timeouts, got.releases, got.buries, got.kicks}, "counters of job %d", r.ID)
				require.Equal(t, uint64(time.Duration(r.Delay)/time.Second), got.delay)
				require.InDelta(t, want[r.ID].age, got.age, 3)
			}
			stats, err := b.Stats(ctx)
			require.NoError(t, err)
			require.Equal(t, uint64(len(want)), stats.ReadyJobs+stats.DelayedJobs+stats.BuriedJobs)
		})
	}
}
