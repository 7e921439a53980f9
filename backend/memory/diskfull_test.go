package memory_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/internal/faulttest"
)

// The binlog's disk (a small tmpfs) fills up under a steady stream of puts: puts answer
// OUT_OF_MEMORY, as beanstalkd does, while reserves and deletes go on (a delete uses room its
// put reserved); once space returns, puts are accepted again; and the binlog, opened anew, holds
// every job acknowledged and not deleted: the ledger finds nothing lost. (Deletes stop before
// space returns, so that the space comes from outside the binlog.)
func TestBinlogDiskFullUnderLoad(t *testing.T) {
	dir := faulttest.Tmpfs(t, "4m")
	// What the binlog does not get: the space that returns when this file goes.
	filler := filepath.Join(dir, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 1<<20), 0o600))
	// And what the operator frees before the restart: a binlog needs room for a file of its
	// own to open, and the puts fill the disk again at once.
	reserve := filepath.Join(dir, "reserve")
	require.NoError(t, os.WriteFile(reserve, make([]byte, 512<<10), 0o600))
	logDir := filepath.Join(dir, "binlog")
	require.NoError(t, os.Mkdir(logDir, 0o700))
	open := func() *memory.Backend {
		b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: logDir, MaxFileSize: 256 << 10}})
		require.NoError(t, err)
		return b
	}

	b := open()
	gw := faulttest.StartGateway(t, "gw", b)
	ledger := faulttest.NewLedger(time.Minute)
	producers := &faulttest.Load{Ledger: ledger, Gateways: []faulttest.Gateway{gw}, Producers: 2, Workers: -1, Pace: time.Millisecond, Body: 4 << 10}
	producers.Start()
	if !waitFull(ledger, gw.Name, 60*time.Second) {
		t.Fatal("the disk never filled up")
	}
	full := time.Now()
	time.Sleep(time.Second)
	slowest, refused := ledger.SlowestFailure(gw.Name, full, time.Now())
	t.Logf("with the disk full, %d puts answered OUT_OF_MEMORY, the slowest after %v", refused, slowest.Round(time.Millisecond))
	require.Positive(t, refused)
	require.Less(t, slowest, time.Second)
	workers := &faulttest.Load{Ledger: ledger, Gateways: []faulttest.Gateway{gw}, Producers: -1, Workers: 2}
	workers.Start()
	require.Eventually(t, func() bool { return ledger.Verdict().Deletes > 0 }, 10*time.Second, 50*time.Millisecond,
		"deletes go on while the disk is full")

	workers.Stop()

	// Space returns: puts are accepted again.
	returned := time.Now()
	require.NoError(t, os.Remove(filler))
	var accepted time.Time
	require.Eventually(t, func() (ok bool) {
		accepted, ok = ledger.FirstPutAfter(gw.Name, returned)
		return ok
	}, 10*time.Second, 20*time.Millisecond, "puts were not accepted again once space returned")
	t.Logf("puts were accepted again %v after space returned", accepted.Sub(returned).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond)
	producers.Stop()
	require.NoError(t, b.Close())

	// Everything acknowledged and not deleted is in the binlog.
	require.NoError(t, os.Remove(reserve))
	reopened := faulttest.StartGateway(t, "reopened", open())
	n := workers.Drain(t, reopened, time.Second)
	t.Logf("drained %d jobs from the binlog opened anew", n)
	require.Positive(t, n)
	ledger.Check(t)
}

// waitFull waits until a put through gateway has been refused.
func waitFull(l *faulttest.Ledger, gateway string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, n := l.SlowestFailure(gateway, time.Time{}, time.Now()); n > 0 {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
