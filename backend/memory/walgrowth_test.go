package memory_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"

	"github.com/beangate/beangate/backend/memory/binlog"
)

// dirBytes is the bytes of the binlog files in dir.
func dirBytes(t *testing.T, dir string) (total int64, files int) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == "lock" {
			continue
		}
		info, err := e.Info()
		require.NoError(t, err)
		total += info.Size()
		files++
	}
	return total, files
}

// churnLongLivedJobs is the workload behind beanstalkd's unbounded growth (its issues #276,
// #570, #622): two long-lived jobs, each reserved, released with a delay and kicked, rounds
// times. check runs every 100 rounds.
func churnLongLivedJobs(t *testing.T, addr string, rounds int, check func()) []uint64 {
	c := dialBS(t, addr)
	ids := []uint64{c.put(1, 0, 60, []byte("long-lived one")), c.put(2, 0, 60, []byte("long-lived two"))}
	for i := range rounds {
		for _, id := range ids {
			c.reserveJob(id)
			c.must(fmt.Sprintf("release %d 1 1", id), nil, "RELEASED")
			c.must(fmt.Sprintf("kick-job %d", id), nil, "KICKED")
		}
		if i%100 == 0 {
			check()
		}
	}
	return ids
}

func TestBinlogStaysBoundedWithLongLivedJobsReleasedAndKicked(t *testing.T) {
	t.Parallel()
	const fileSize, rounds = 4096, 1500
	dir := t.TempDir()
	addr, stop := startBeangate(t, binlog.Options{Dir: dir, MaxFileSize: fileSize, NoSync: true}, 0)
	live := 2 * binlog.FullSize(len("default"), len("long-lived one"))
	maxSeen := int64(0)
	ids := churnLongLivedJobs(t, addr, rounds, func() {
		total, _ := dirBytes(t, dir)
		maxSeen = max(maxSeen, total)
		require.LessOrEqual(t, total, 3*live+2*fileSize)
	})
	st := dialBS(t, addr).stats()
	migrated, _ := strconv.Atoi(st["binlog-records-migrated"])
	require.Positive(t, migrated)
	stop()
	t.Logf("at most %d bytes on disk for %d live bytes; %d records migrated", maxSeen, live, migrated)

	// Compaction lost nothing: beangate and beanstalkd both find the two jobs, kicked every round.
	bgAddr, _ := startBeangate(t, binlog.Options{Dir: copyDir(t, dir)}, 0)
	bsAddr, _ := startBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), "-b", copyDir(t, dir))
	for _, addr := range []string{bgAddr, bsAddr} {
		c := dialBS(t, addr)
		for _, id := range ids {
			js := c.statsJob(id)
			require.NotNil(t, js)
			require.Equal(t, strconv.Itoa(rounds), js["kicks"])
			require.Equal(t, "ready", js["state"])
		}
	}
}

// The same workload on beanstalkd piles files up: the bug the test above guards against.
func TestBeanstalkdBinlogGrowsWithLongLivedJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr, stop := startBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), "-b", dir, "-s", "4096", "-F")
	churnLongLivedJobs(t, addr, 1500, func() {})
	stop()
	_, files := dirBytes(t, dir)
	require.Greater(t, files, 20, "beanstalkd's files in %s", filepath.Base(dir))
}
