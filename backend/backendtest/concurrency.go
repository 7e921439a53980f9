package backendtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

var concurrencyCases = []testCase{
	{"DueJobsAreNotHiddenByConcurrentReaders", func(h *harness) {
		// Built from the recorded divergences valid#13, valid#52, blocking#105 and valid#224
		// (Postgres): a delayed job whose time has come and an expired reservation are ready at
		// that moment, whoever else is looking at the store. A reserve takes the best of them by
		// priority, and a waiting reserve gets the reservation that expires at once, not at a
		// later poll. Other sessions read the store all along (stats, stats-tube, peek-ready of
		// their own tubes, where jobs come due at the same moments), as a busy server's clients
		// do: a store that promotes due jobs as it reads must not let a reserve pass over them.
		owner, holder := h.session().use("q"), h.session().watch("q")
		worker := h.session().watch("q").ignore(backend.DefaultTube)
		var busy []*client
		for i := range 4 {
			busy = append(busy, h.session().use(fmt.Sprintf("busy%d", i)))
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i, c := range busy {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = h.b.Stats(ctx)
					_, _ = h.b.PeekState(ctx, c.used, backend.Ready)
					_, _ = h.b.TubeStats(ctx, fmt.Sprintf("busy%d", (i+n)%len(busy)))
				}
			}()
		}
		defer func() { close(stop); wg.Wait() }()
		comeDue := func(d time.Duration) {
			for _, c := range busy { // due at the same moment as the reserve's jobs
				for range 20 {
					c.put(job{pri: 1, delay: d})
				}
			}
		}
		for range 10 {
			// A reserve: the due job of better priority, not the expired reservation.
			expired := owner.put(job{pri: 763, ttr: time.Second})
			holder.reserveID(expired)
			worst := owner.put(job{pri: 4000})
			due := owner.put(job{pri: 628, delay: 2 * time.Second})
			comeDue(2 * time.Second)
			h.advance(2 * time.Second)
			worker.reserveID(due)
			worker.reserveID(expired)
			worker.reserveID(worst)
			for _, id := range []uint64{due, expired, worst} {
				require.NoError(h, h.b.Delete(h.ctx(), worker.id, id))
			}

			// A waiting reserve: the reservation that runs out, at once.
			again := owner.put(job{ttr: time.Second})
			holder.reserveID(again)
			comeDue(time.Second)
			p := worker.reserveAsync(forever)
			start := time.Now()
			h.advance(time.Second)
			p.requireJob(again)
			// A store that missed it finds it at its next poll, up to a second later; each of the
			// ten rounds shows that with a chance of one in four at least, and a loaded machine
			// (a CI run under -race) stays well within three quarters of a second.
			require.Less(h, time.Since(start), 750*time.Millisecond, "the expired reservation came a poll late")
			require.NoError(h, h.b.Delete(h.ctx(), worker.id, again))
		}
	}},
	{"EveryJobIsReservedExactlyOnce", func(h *harness) {
		const producers, workers, perProducer = 4, 20, 500
		ctx, cancel := context.WithTimeout(context.Background(), 4*watchdog)
		defer cancel()
		// Workers wait without a timeout (the fake clock never moves) until the last job is done.
		stop, allDone := context.WithCancel(ctx)
		defer allDone()

		var (
			mu       sync.Mutex
			put      = make(map[uint64]bool)
			reserved = make(map[uint64]int)
			done     atomic.Int64
			wg       sync.WaitGroup
			errs     = make(chan error, producers+workers)
		)
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tube := fmt.Sprintf("t%d", p%2)
				for i := range perProducer {
					id, err := h.b.Put(ctx, backend.PutParams{Tube: tube, Priority: uint32(i % 7), TTR: forever, Body: []byte("x")})
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					put[id] = true
					mu.Unlock()
				}
			}()
		}
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := backend.SessionID(fmt.Sprintf("worker.%d", w))
				if err := h.b.BeginSession(ctx, id, backend.SessionInfo{}); err != nil {
					errs <- err
					return
				}
				tubes := []string{"t0", "t1"}
				for _, t := range tubes {
					if err := h.b.WatchTube(ctx, id, t); err != nil {
						errs <- err
						return
					}
				}
				for {
					j, err := h.b.Reserve(stop, backend.ReserveParams{Session: id, Tubes: append(tubes, backend.DefaultTube), Timeout: -1})
					if stop.Err() != nil && ctx.Err() == nil {
						return // every job is done (a job got at this moment is never deleted: caught below)
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					reserved[j.ID]++
					mu.Unlock()
					if err := h.b.Delete(ctx, id, j.ID); err != nil {
						errs <- err
						return
					}
					if done.Add(1) == producers*perProducer {
						allDone()
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(h, err)
		}
		require.Len(h, put, producers*perProducer)
		require.Len(h, reserved, producers*perProducer)
		for id, n := range reserved {
			require.True(h, put[id], "job %d was never put", id)
			require.Equal(h, 1, n, "job %d reserved %d times", id, n)
		}
		st := h.stats()
		require.Zero(h, st.ReadyJobs+st.ReservedJobs)
		require.Equal(h, uint64(producers*perProducer), st.TotalJobs)
	}},
	{"ManyWaitersEachEventuallyGetAJob", func(h *harness) {
		const n = 50
		clients := make([]*client, n)
		for i := range clients {
			clients[i] = h.session()
		}
		results := make(chan reserveResult, n)
		ctx := h.ctx()
		for _, c := range clients {
			go func() {
				j, err := h.b.Reserve(ctx, c.reserveParams(forever))
				results <- reserveResult{j, err}
			}()
		}
		time.Sleep(settle)
		producer := h.session()
		put := make(map[uint64]bool)
		for range n {
			put[producer.put(job{})] = true
		}
		got := make(map[uint64]bool)
		for range n {
			select {
			case r := <-results:
				require.NoError(h, r.err)
				require.True(h, put[r.job.ID])
				require.False(h, got[r.job.ID], "job %d handed out twice", r.job.ID)
				got[r.job.ID] = true
			case <-time.After(watchdog):
				h.Fatalf("only %d of %d waiters got a job", len(got), n)
			}
		}
		require.Equal(h, uint64(n), h.stats().ReservedJobs)
	}},
	{"CancelledWaitersNeverSwallowJobs", func(h *harness) {
		// Waiters give up while jobs arrive: each job is either handed to a waiter whose
		// Reserve then returns it, or stays ready; none is left with a waiter that gave up.
		const n = 100
		var wg sync.WaitGroup
		var handed atomic.Int64
		cancels := make([]context.CancelFunc, n)
		for i := range n {
			c := h.session()
			ctx, cancel := context.WithCancel(h.ctx())
			cancels[i] = cancel
			wg.Add(1)
			go func() {
				defer wg.Done()
				j, err := h.b.Reserve(ctx, c.reserveParams(forever))
				if err == nil {
					handed.Add(1)
					if err := h.b.Release(h.ctx(), backend.ReleaseParams{Session: c.id, ID: j.ID}); err != nil {
						h.Errorf("release of a job reserve returned: %v", err)
					}
					return
				}
				if !errors.Is(err, context.Canceled) {
					h.Errorf("reserve: job %v, err %v", j, err)
				}
			}()
		}
		time.Sleep(settle)
		producer := h.session()
		for _, cancel := range cancels {
			cancel() // the waiters wake, but some are handed a job before they get to give up
		}
		for range n {
			producer.put(job{})
		}
		wg.Wait()
		st := h.stats()
		require.Zero(h, st.ReservedJobs, "a job is stuck with a waiter that gave up")
		require.Equal(h, uint64(n), st.ReadyJobs, "%d were handed out and released", handed.Load())
	}},
	{"ConcurrentSessionsLeaveNoTubeBehind", func(h *harness) {
		const n = 40
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := backend.SessionID(fmt.Sprintf("churn.%d", i))
				tube := fmt.Sprintf("shared%d", i%3)
				for range 20 {
					// The watchdog bounds each call: 100 calls of 40 sessions at once on a
					// loaded machine may take longer than one watchdog in all.
					require.NoError(h, h.b.BeginSession(h.ctx(), id, backend.SessionInfo{}))
					require.NoError(h, h.b.UseTube(h.ctx(), id, tube))
					require.NoError(h, h.b.WatchTube(h.ctx(), id, tube))
					require.NoError(h, h.b.IgnoreTube(h.ctx(), id, backend.DefaultTube))
					require.NoError(h, h.b.EndSession(h.ctx(), id))
				}
			}()
		}
		wg.Wait()
		require.Equal(h, []string{backend.DefaultTube}, h.tubes())
	}},
}
