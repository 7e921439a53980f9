package gateway_test

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
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// Tube policies act on workers written for beanstalkd, through an unmodified client library:
// nothing in these workers knows a policy exists.

func setPolicy(t *testing.T, b backend.Backend, p backend.Policy) {
	t.Helper()
	require.NoError(t, b.SetPolicy(context.Background(), p))
}

func dialTube(t *testing.T, addr, tube string) (*beanstalk.Conn, *beanstalk.TubeSet) {
	t.Helper()
	c, err := beanstalk.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	c.Tube.Name = tube
	return c, beanstalk.NewTubeSet(c, tube)
}

func tubeStat(t *testing.T, c *beanstalk.Conn, tube, key string) int {
	t.Helper()
	st, err := beanstalk.NewTube(c, tube).Stats()
	require.NoError(t, err)
	n, err := strconv.Atoi(st[key])
	require.NoError(t, err)
	return n
}

// A worker that dies on a job (its connection drops, or it hangs past the TTR) no longer gets
// it back forever: after max-reserves tries the job is buried, where kick finds it.
func TestPolicyCrashingWorkersJobLandsBuried(t *testing.T) {
	t.Parallel()
	store := newMemory(t)
	setPolicy(t, store, backend.Policy{Tube: "fragile", MaxReserves: 3})
	addr, _ := gatewaytest.StartServer(t, store, gateway.Config{})
	producer, _ := dialTube(t, addr, "fragile")
	id, err := producer.Put([]byte("poison"), 0, 0, time.Second)
	require.NoError(t, err)

	// Two workers crash: their connections drop with the job reserved.
	for range 2 {
		w, ws := dialTube(t, addr, "fragile")
		got, _, err := ws.Reserve(5 * time.Second)
		require.NoError(t, err)
		require.Equal(t, id, got)
		require.NoError(t, w.Close())
	}
	// The third hangs: its TTR runs out.
	_, ws := dialTube(t, addr, "fragile")
	got, _, err := ws.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.Eventually(t, func() bool {
		st, err := producer.StatsJob(id)
		return err == nil && st["state"] == "buried"
	}, 5*time.Second, 10*time.Millisecond)

	st, err := producer.StatsJob(id)
	require.NoError(t, err)
	require.Equal(t, "3", st["reserves"])
	require.Equal(t, "1", st["timeouts"])
	require.Equal(t, "1", st["buries"])
	_, ws = dialTube(t, addr, "fragile")
	_, _, err = ws.Reserve(0)
	require.ErrorIs(t, err, beanstalk.ErrTimeout, "the job stays buried")

	// A worker that releases it on its last try hears BURIED, as from a full beanstalkd.
	n, err := beanstalk.NewTube(producer, "fragile").Kick(1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	w, ws := dialTube(t, addr, "fragile")
	got, _, err = ws.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.ErrorIs(t, w.Release(got, 0, 0), beanstalk.ErrBuried)
}

// Twenty workers on a tube capped at three: stats-tube, sampled throughout, never shows more
// than three reserved, and every job is done.
func TestPolicyCapHoldsAcrossTwentyWorkers(t *testing.T) {
	t.Parallel()
	const (
		workers = 20
		jobs    = 150
		capped  = 3
	)
	store := newMemory(t)
	setPolicy(t, store, backend.Policy{Tube: "api", MaxReserved: capped})
	addr, _ := gatewaytest.StartServer(t, store, gateway.Config{})
	producer, _ := dialTube(t, addr, "api")
	for i := range jobs {
		_, err := producer.Put([]byte(strconv.Itoa(i)), 0, 0, time.Minute)
		require.NoError(t, err)
	}

	var done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		c, ts := dialTube(t, addr, "api")
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
	sampler, _ := dialTube(t, addr, "api")
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	most, samples := 0, 0
	for sampling := true; sampling; {
		select {
		case <-stop:
			sampling = false
		default:
			n := tubeStat(t, sampler, "api", "current-jobs-reserved")
			require.LessOrEqual(t, n, capped)
			most = max(most, n)
			samples++
		}
	}
	require.Equal(t, int64(jobs), done.Load())
	require.Equal(t, capped, most, "the workers kept the cap full")
	t.Logf("%d samples", samples)
}

// A rate of 50 reserves a second holds within 10 % for workers on two gateways sharing the
// store, whatever their number.
func TestPolicyRateHoldsAcrossTwoGateways(t *testing.T) {
	t.Parallel()
	const (
		rate   = 50
		window = 4 * time.Second
	)
	store := newMemory(t)
	setPolicy(t, store, backend.Policy{Tube: "mail", Rate: rate, Burst: 1})
	addrs := make([]string, 2)
	for i := range addrs {
		addrs[i], _ = gatewaytest.StartServer(t, store, gateway.Config{Sessions: backend.NewSessionIDs()})
	}
	producer, _ := dialTube(t, addrs[0], "mail")
	for range 2 * rate * int(window/time.Second) {
		_, err := producer.Put([]byte("x"), 0, 0, time.Minute)
		require.NoError(t, err)
	}

	var reserved atomic.Int64
	deadline := time.Now().Add(window)
	var wg sync.WaitGroup
	for i := range 10 {
		c, ts := dialTube(t, addrs[i%2], "mail")
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
	want := rate * window.Seconds()
	got := float64(reserved.Load())
	t.Logf("%v reserves in %v (want %v ± 10%%)", got, window, want)
	require.InDelta(t, want, got, want/10)
}
