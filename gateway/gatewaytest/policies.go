package gatewaytest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	beanstalk "github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
)

// RunPolicies checks that tube policies act on workers written for beanstalkd, through an
// unmodified client library (nothing in these workers knows a policy exists), with the workers
// spread over two gateways of one fleet.
//
// newPair returns two Backends on one store, as two gateway processes would have (or the same
// Backend twice, for a store that is not shared), and registers their cleanup. Each gateway
// sets the case's policy itself, as each gateway of a fleet does from its config at start.
// Cases run in parallel, each in its own tube; the rate and backoff cases take about 10 s.
func RunPolicies(t *testing.T, newPair func(t *testing.T) (a, b backend.Backend)) {
	cases := []struct {
		name string
		run  func(t *testing.T, pf *policyFleet)
	}{
		{"CrashingWorkersJobLandsBuried", crashingWorkersJobLandsBuried},
		{"CapHoldsAcrossTwentyWorkers", capHoldsAcrossTwentyWorkers},
		{"RateHoldsAcrossTwoGateways", rateHoldsAcrossTwoGateways},
		{"TimedOutJobComesBackAfterABackoffThenIsBuried", timedOutJobBacksOffThenIsBuried},
		{"AReleaseDelayWinsOverTheBackoff", releaseDelayWinsOverTheBackoff},
		{"HistoryNamesEachHolderThroughTheAPIAndCtl", historyNamesEachHolder},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ga, gb := newPair(t)
			c.run(t, &policyFleet{
				t:     t,
				tube:  tubeFor(t),
				b:     []backend.Backend{ga, gb},
				addrs: []string{startGateway(t, ga).addr, startGateway(t, gb).addr},
			})
		})
	}
}

// policyFleet is a case's two gateways and its tube.
type policyFleet struct {
	t     *testing.T
	tube  string
	b     []backend.Backend
	addrs []string
}

// govern sets p on the case's tube through each gateway's backend.
func (f *policyFleet) govern(p backend.Policy) {
	f.t.Helper()
	p.Tube = f.tube
	for _, b := range f.b {
		require.NoError(f.t, b.SetPolicy(context.Background(), p))
	}
}

// dial opens a go-beanstalk connection to gateway i (0 or 1) using and watching only the tube.
func (f *policyFleet) dial(i int) (*beanstalk.Conn, *beanstalk.TubeSet) {
	f.t.Helper()
	c, err := beanstalk.Dial("tcp", f.addrs[i])
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = c.Close() })
	c.Tube.Name = f.tube
	return c, beanstalk.NewTubeSet(c, f.tube)
}

// stat reads one figure of the tube's stats-tube through c.
func (f *policyFleet) stat(c *beanstalk.Conn, key string) int {
	f.t.Helper()
	st, err := beanstalk.NewTube(c, f.tube).Stats()
	require.NoError(f.t, err)
	n, err := strconv.Atoi(st[key])
	require.NoError(f.t, err)
	return n
}

// A worker that dies on a job (its connection drops, or it hangs past the TTR) no longer gets
// it back forever: after max-reserves tries the job is buried, where kick finds it. The tries
// alternate between the gateways.
func crashingWorkersJobLandsBuried(t *testing.T, f *policyFleet) {
	f.govern(backend.Policy{MaxReserves: 3})
	producer, _ := f.dial(0)
	id, err := producer.Put([]byte("poison"), 0, 0, time.Second)
	require.NoError(t, err)

	// Two workers crash: their connections drop with the job reserved.
	for i := range 2 {
		w, ws := f.dial(1 - i)
		got, _, err := ws.Reserve(5 * time.Second)
		require.NoError(t, err)
		require.Equal(t, id, got)
		require.NoError(t, w.Close())
	}
	// The third hangs: its TTR runs out.
	_, ws := f.dial(1)
	got, _, err := ws.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.Eventually(t, func() bool {
		st, err := producer.StatsJob(id)
		return err == nil && st["state"] == "buried"
	}, 10*time.Second, 10*time.Millisecond)

	st, err := producer.StatsJob(id)
	require.NoError(t, err)
	require.Equal(t, "3", st["reserves"])
	require.Equal(t, "1", st["timeouts"])
	require.Equal(t, "1", st["buries"])
	for i := range 2 {
		_, ws = f.dial(i)
		_, _, err = ws.Reserve(0)
		require.ErrorIs(t, err, beanstalk.ErrTimeout, "the job stays buried")
	}

	// A worker that releases it on its last try hears BURIED, as from a full beanstalkd.
	n, err := beanstalk.NewTube(producer, f.tube).Kick(1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	w, ws := f.dial(1)
	got, _, err = ws.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.ErrorIs(t, w.Release(got, 0, 0), beanstalk.ErrBuried)
}

// Twenty workers on a tube capped at three, half on each gateway: stats-tube, sampled
// throughout, never shows more than three reserved, the workers keep the cap full, and every
// job is done.
func capHoldsAcrossTwentyWorkers(t *testing.T, f *policyFleet) {
	const (
		workers = 20
		jobs    = 150
		capped  = 3
	)
	f.govern(backend.Policy{MaxReserved: capped})
	producer, _ := f.dial(0)
	for i := range jobs {
		_, err := producer.Put([]byte(strconv.Itoa(i)), 0, 0, time.Minute)
		require.NoError(t, err)
	}

	var done atomic.Int64
	var wg sync.WaitGroup
	for i := range workers {
		c, ts := f.dial(i % 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				id, _, err := ts.Reserve(time.Second)
				if errors.Is(err, beanstalk.ErrTimeout) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(2 * time.Millisecond) // the work
				if err := c.Delete(id); err != nil {
					t.Error(err)
					return
				}
				done.Add(1)
			}
		}()
	}
	sampler, _ := f.dial(1)
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	most, samples := 0, 0
	for sampling := true; sampling; {
		select {
		case <-stop:
			sampling = false
		default:
			n := f.stat(sampler, "current-jobs-reserved")
			require.LessOrEqual(t, n, capped)
			most = max(most, n)
			samples++
		}
	}
	require.Equal(t, int64(jobs), done.Load())
	require.Equal(t, capped, most, "the workers kept the cap full")
	t.Logf("%d samples", samples)
}

// A rate of 50 reserves a second, with a burst of 10, holds within 10 % over 10 s for ten
// workers, five on each gateway. The burst lets a reserve woken a little late by the store
// still take the token it missed, as a worker would need in production.
func rateHoldsAcrossTwoGateways(t *testing.T, f *policyFleet) {
	const (
		rate   = 50
		burst  = 10
		window = 10 * time.Second
	)
	f.govern(backend.Policy{Rate: rate, Burst: burst})
	producer, _ := f.dial(0)
	for range 2 * rate * int(window/time.Second) {
		_, err := producer.Put([]byte("x"), 0, 0, time.Minute)
		require.NoError(t, err)
	}

	var reserved atomic.Int64
	deadline := time.Now().Add(window)
	var wg sync.WaitGroup
	for i := range 10 {
		c, ts := f.dial(i % 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				// Whole seconds on the wire: waits past the deadline are not counted.
				id, _, err := ts.Reserve(time.Second)
				if errors.Is(err, beanstalk.ErrTimeout) {
					continue
				}
				if time.Now().After(deadline) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				reserved.Add(1)
				_ = c.Delete(id)
			}
		}()
	}
	wg.Wait()
	want := rate*window.Seconds() + burst // the bucket is full when the policy is set
	got := float64(reserved.Load())
	t.Logf("%v reserves in %v (want %v ± 10%%)", got, window, want)
	require.InDelta(t, want, got, want/10)
}

// A worker that takes a job and lets its TTR run out sees it again once the TTR and the backoff
// have passed — a backoff of 1 s, then 2 s, then 4 s — and the job is buried when the last try
// allowed by max-reserves times out. Each try reserves on a fresh connection, alternating between
// the gateways, while the connection holding the job stays open: the TTR returns it, not a
// connection's end.
func timedOutJobBacksOffThenIsBuried(t *testing.T, f *policyFleet) {
	const (
		ttr = time.Second
		// early and late bound when a try may come: a store acts on a TTR or a due time a little
		// after it, never before.
		early = 50 * time.Millisecond
		late  = 700 * time.Millisecond
	)
	f.govern(backend.Policy{RetryDelay: time.Second, MaxReserves: 4})
	producer, _ := f.dial(0)
	id, err := producer.Put([]byte("flaky"), 0, 0, ttr)
	require.NoError(t, err)
	_, ws := f.dial(0)
	got, _, err := ws.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	last := time.Now()
	for i, backoff := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		_, ws := f.dial((i + 1) % 2)
		got, _, err := ws.Reserve(15 * time.Second)
		require.NoError(t, err)
		require.Equal(t, id, got)
		now := time.Now()
		gap := now.Sub(last) - ttr
		t.Logf("try %d came %v after the TTR ran out (backoff %v)", i+2, gap, backoff)
		require.GreaterOrEqual(t, gap, backoff-early, "try %d came before its backoff", i+2)
		require.LessOrEqual(t, gap, backoff+late, "try %d came late", i+2)
		last = now
	}
	require.Eventually(t, func() bool {
		st, err := producer.StatsJob(id)
		return err == nil && st["state"] == "buried"
	}, ttr+2*time.Second, 10*time.Millisecond, "the fourth try's timeout buries the job")
	st, err := producer.StatsJob(id)
	require.NoError(t, err)
	require.Equal(t, "4", st["reserves"])
	require.Equal(t, "4", st["timeouts"])
	require.Equal(t, "1", st["buries"])
}

// A release with a delay keeps the worker's delay; a release with delay 0 gets the backoff
// (2 s after the second reservation), which stats-job shows as the job's delay.
func releaseDelayWinsOverTheBackoff(t *testing.T, f *policyFleet) {
	f.govern(backend.Policy{RetryDelay: time.Second})
	w, ws := f.dial(0)
	id, err := w.Put([]byte("x"), 0, 0, time.Minute)
	require.NoError(t, err)
	stats := func(c *beanstalk.Conn) map[string]string {
		st, err := c.StatsJob(id)
		require.NoError(t, err)
		return st
	}

	got, _, err := ws.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.NoError(t, w.Release(id, 0, 30*time.Second))
	st := stats(w)
	require.Equal(t, "delayed", st["state"])
	require.Equal(t, "30", st["delay"])

	other, ots := f.dial(1)
	require.NoError(t, other.KickJob(id))
	got, _, err = ots.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.NoError(t, other.Release(id, 0, 0))
	st = stats(w)
	require.Equal(t, "delayed", st["state"])
	require.Equal(t, "2", st["delay"])
	_, _, err = ots.Reserve(0)
	require.ErrorIs(t, err, beanstalk.ErrTimeout, "not ready before its backoff")
}
