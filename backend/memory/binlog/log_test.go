package binlog

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// put places one full record under mu (the caller's lock) and returns what to commit.
func put(t *testing.T, l *Log, mu *sync.Mutex, id uint64) uint64 {
	mu.Lock()
	defer mu.Unlock()
	r := Record{ID: id, Tube: "default", Body: []byte("body"), State: Ready}
	require.NoError(t, l.Reserve(FullSize(7, 4)+ShortSize))
	_, seq, err := l.WriteFull(&r, nil)
	require.NoError(t, err)
	return seq
}

func openLog(t *testing.T, opts Options) *Log {
	opts.Dir = t.TempDir()
	l, _, err := Open(opts, &collector{byID: map[uint64]*Job{}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// -f0: a commit returns with its record on disk, and commits that arrive while an fsync runs
// share the next one.
func TestCommitsShareFsyncs(t *testing.T) {
	t.Parallel()
	l := openLog(t, Options{})
	l.slowSync = time.Millisecond // a disk's fsync, whatever the test machine's
	var mu sync.Mutex
	var wg sync.WaitGroup
	const writers, each = 16, 50
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				seq := put(t, l, &mu, uint64(w*each+i+1))
				require.NoError(t, l.Commit(seq))
				l.fmu.Lock()
				require.GreaterOrEqual(t, l.synced, seq)
				l.fmu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Less(t, l.syncs.Load(), uint64(writers*each/4), "group commit")
}

// -f MS: the records are synced at most MS after being written even when nothing follows;
// -F never syncs.
func TestSyncIntervalAlsoWhenIdle(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	l := openLog(t, Options{SyncInterval: 20 * time.Millisecond})
	seq := put(t, l, &mu, 1)
	require.NoError(t, l.Commit(seq))
	require.Eventually(t, func() bool {
		l.fmu.Lock()
		defer l.fmu.Unlock()
		return l.synced >= seq
	}, time.Second, 5*time.Millisecond)

	never := openLog(t, Options{NoSync: true})
	require.NoError(t, never.Commit(put(t, never, &mu, 1)))
	time.Sleep(30 * time.Millisecond)
	require.Zero(t, never.syncs.Load())
}

// A write that fails is never silent: the commit returns it, it is counted, and its records
// stay queued for the next commit instead of being dropped.
func TestFailedWriteIsReported(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	l := openLog(t, Options{NoSync: true})
	seq := put(t, l, &mu, 1)
	require.NoError(t, l.current().fd.Close()) // every write to it now fails
	err := l.Commit(seq)
	require.ErrorContains(t, err, "binlog: write of binlog.1")
	require.Equal(t, uint64(1), l.Stats().WriteErrors)
	l.pmu.Lock()
	require.Len(t, l.pending, 1, "kept for a retry")
	l.pmu.Unlock()
}
