package migrate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// --follow under load: producers keep putting to Debian's beanstalkd (and start a new tube
// half-way), workers reserve from beangate over TCP; every job is processed exactly once, and
// the lag from the put on the old server to the reserve on beangate is measured.
func TestFollowUnderLoad(t *testing.T) {
	const jobs, rate = 1500, 1000 // per second
	src := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	store := memory.New(memory.Options{})
	gw, _ := gatewaytest.StartServer(t, store, gateway.Config{})
	dst := NewStoreDest(store)

	// t0 and t1 are in use before the mover starts (a client watches them); "late" is not.
	keep := testConn(t, src)
	must(t, keep, "WATCHING", "watch t0")
	must(t, keep, "WATCHING", "watch t1")

	ctx, stop := context.WithCancel(context.Background())
	source, err := OpenSource(ctx, "beanstalk://"+src, "", true, testLog(t))
	require.NoError(t, err)
	defer source.Close()
	moverDone := make(chan error, 1)
	go func() {
		_, err := Run(ctx, source, dst, Options{Log: testLog(t)})
		moverDone <- err
	}()

	var mu sync.Mutex
	got := map[int]int{}
	var lags, lateLags []time.Duration
	tubes := []string{"t0", "t1", "late"}
	var wg sync.WaitGroup
	for range 2 {
		w := testConn(t, gw)
		for _, tube := range tubes {
			must(t, w, "WATCHING", "watch %s", tube)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_ = w.SetDeadline(time.Now().Add(3 * time.Second))
				w.Send("reserve-with-timeout 2")
				err := w.Flush()
				var id uint64
				var body []byte
				if err == nil {
					id, body, err = w.ReadJob("RESERVED")
				}
				if err != nil {
					return // timed out: the load is over
				}
				now := time.Now()
				seq, sent, _ := strings.Cut(strings.TrimPrefix(string(body), "late "), " ")
				n, _ := strconv.Atoi(seq)
				ns, _ := strconv.ParseInt(sent, 10, 64)
				mu.Lock()
				got[n]++
				if strings.HasPrefix(string(body), "late") {
					lateLags = append(lateLags, now.Sub(time.Unix(0, ns)))
				} else {
					lags = append(lags, now.Sub(time.Unix(0, ns)))
				}
				mu.Unlock()
				if err := w.Delete(id); err != nil {
					return
				}
			}
		}()
	}

	p := testConn(t, src)
	start := time.Now()
	for i := range jobs {
		tube := tubes[i%2]
		if i >= jobs/2 && i%3 == 0 {
			tube = "late" // a tube new to the mover
		}
		if d := time.Until(start.Add(time.Duration(i) * time.Second / rate)); d > 0 {
			time.Sleep(d)
		}
		body := fmt.Sprintf("%d %d", i, time.Now().UnixNano())
		if tube == "late" {
			body = "late " + body
		}
		put(t, p, tube, 0, 0, 60, body)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == jobs {
			break
		}
	}
	stop()
	require.NoError(t, <-moverDone)
	wg.Wait()
	require.Len(t, got, jobs)
	for i := range jobs {
		require.Equal(t, 1, got[i], "job %d processed once", i)
	}
	requireDrained(t, src)
	slices.Sort(lags)
	slices.Sort(lateLags)
	p50, p99, worst := lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1]
	t.Logf("lag from put on beanstalkd to reserve on beangate over %d jobs at %d/s: p50 %v, p99 %v, max %v; jobs of a tube new to the mover: at most %v",
		len(lags), rate, p50, p99, worst, lateLags[len(lateLags)-1])
	// The goal is p99 <= 50 ms; the bound leaves room for a loaded CI machine and -race.
	require.Less(t, p99, 250*time.Millisecond)
	require.Less(t, lateLags[len(lateLags)-1], 1500*time.Millisecond, "a new tube is picked up within a second")
}
