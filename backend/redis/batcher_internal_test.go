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

// Many sessions calling at once keep both batch slots busy and handed over. Both leaders may
// finish before a call handed a slot has run (the hook makes that likely); a slot handed to a
// call that already leads would be lost, and with both lost later calls wait with nobody to
// send them until they time out.
func TestBatchSlotsAreNeverLost(t *testing.T) {
	b := newInternalBackend(t)
	b.batch.beforeSend = func() { time.Sleep(200 * time.Microsecond) }
	b.batch.maxInFlight = 2 // the lost slot needs two leaders; before any call, so no race

	const sessions, calls = 32, 60
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
