package redis

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// Sessions calling at once keep the batch slots busy and handed over: a few use both (each
// alone in its batch), many share one. Both leaders may finish before a call handed a slot has
// run (the hook makes that likely); a slot handed to a call that already leads would be lost,
// and with both lost later calls wait with nobody to send them until they time out.
func TestBatchSlotsAreNeverLost(t *testing.T) {
	for _, sessions := range []int{2, 3, 32} {
		t.Run(fmt.Sprintf("%d sessions", sessions), func(t *testing.T) {
			b := newInternalBackend(t)
			b.batch.beforeSend = func() { time.Sleep(200 * time.Microsecond) }
			require.Equal(t, 2, b.batch.maxInFlight, "the lost slot needs two leaders")
			callConcurrently(t, b, sessions, 60)
		})
	}
}

func callConcurrently(t *testing.T, b *Backend, sessions, calls int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := b.Put(ctx, backend.PutParams{Tube: fmt.Sprintf("t%d", i%4), TTR: time.Minute, Body: []byte("x")})
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second): // far beyond the calls' own timeouts
		t.Fatal("calls never completed: a batch slot was lost")
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// Two sessions, each waiting for its own reply (a producer and a worker), each have a round trip
// at once; they do not take turns behind one batch slot.
func TestFewSessionsSendSideBySide(t *testing.T) {
	b := newInternalBackend(t)
	var mu sync.Mutex
	sending, most := 0, 0
	b.batch.sending = func() {
		mu.Lock()
		sending++
		most = max(most, sending)
		mu.Unlock()
		// Until it has happened once, wait a little for the other session's batch, as a slow
		// round trip to Redis would.
		for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			seen := most == 2
			mu.Unlock()
			if seen {
				break
			}
		}
		mu.Lock()
		sending--
		mu.Unlock()
	}
	callConcurrently(t, b, 2, 10)
	require.Equal(t, 2, most, "the second session's call waited for the first one's batch")
}

func TestBatchLen(t *testing.T) {
	calls := func(sizes ...int) []*scriptCall {
		q := make([]*scriptCall, len(sizes))
		for i, n := range sizes {
			q[i] = &scriptCall{bytes: n}
		}
		return q
	}
	many := make([]int, maxBatch+10)
	for _, tc := range []struct {
		name  string
		queue []*scriptCall
		want  int
	}{
		{"empty", nil, 0},
		{"small calls all go", calls(10, 20, 30), 3},
		{"at most maxBatch", calls(many...), maxBatch},
		{"up to maxBatchBytes", calls(maxBatchBytes/2, maxBatchBytes/2, 1), 2},
		{"a big first call goes alone", calls(2*maxBatchBytes, 1), 1},
		{"a big call waits for the next batch", calls(1, maxBatchBytes), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, batchLen(tc.queue))
		})
	}
}
