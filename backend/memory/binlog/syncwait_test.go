package binlog

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// -f MS: a commit does not wait for the interval's fsync. Were a slow disk's fsync (here 300 ms)
// to run while commits need the write lock, every command would stall as long; the target is no
// pause over a few ms at 1M jobs, where an fsync of 10 MB files takes up to 120 ms.
func TestCommitDoesNotWaitForIntervalFsync(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	l := openLog(t, Options{SyncInterval: 10 * time.Millisecond})
	l.holdSync = make(chan struct{})                // the interval's fsync round lasts until the commits are done
	require.NoError(t, l.Commit(put(t, l, &mu, 1))) // arms the interval's fsync
	require.Eventually(t, func() bool { return l.syncing.Load() }, time.Second, time.Millisecond)

	committed := make(chan error, 1)
	go func() {
		for id := uint64(2); id < 50; id++ {
			if err := l.Commit(put(t, l, &mu, id)); err != nil {
				committed <- err
				return
			}
		}
		committed <- nil
	}()
	select { // a commit that waited for the round would wait until it is released below
	case err := <-committed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(l.holdSync)
		t.Fatal("commits waited for the interval's fsync round")
	}
	require.True(t, l.syncing.Load(), "the round was still under way while the commits finished")
	close(l.holdSync)
	require.Eventually(t, func() bool { // what was written meanwhile is synced by the next round
		l.fmu.Lock()
		defer l.fmu.Unlock()
		return l.synced == l.written
	}, 2*time.Second, 5*time.Millisecond)
}

// Moving to a new file starts zero-filling the next one in the background; a reservation made
// meanwhile does not wait for it (it waited under the caller's lock, so every command stalled
// for the zero-fill at each file change), and the records still land in files in order.
func TestReserveDoesNotWaitForZeroFill(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	l := openLog(t, Options{MaxFileSize: 4096, NoSync: true})
	hold := make(chan struct{}) // every zero-fill started from here on lasts until released below
	l.holdPrepare = hold
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	t.Cleanup(release)
	id := uint64(1)
	for first := l.current(); l.current() == first; id++ { // fill the first file: a spare starts
		require.NoError(t, l.Commit(put(t, l, &mu, id)))
	}
	require.NotEmpty(t, l.spares)
	require.False(t, isClosed(l.spares[0].ready), "the spare is still being zero-filled")

	reserved := make(chan error, 1)
	go func() {
		mu.Lock()
		defer mu.Unlock()
		reserved <- l.Reserve(3 * 4096)
	}()
	select { // a reservation that waited for the zero-fill would wait until it is released
	case err := <-reserved:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		release()
		t.Fatal("the reservation waited for the spare's zero-fill")
	}
	release()
	for range 200 { // through the spare under way and the files made for the reservation
		require.NoError(t, l.Commit(put(t, l, &mu, id)))
		id++
	}
	for i := 1; i < len(l.files); i++ {
		require.Equal(t, l.files[i-1].N+1, l.files[i].N)
	}
}
