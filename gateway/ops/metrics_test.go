package ops_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/gateway/ops"
	"github.com/beangate/beangate/internal/clocktest"
)

// Every family docs/operations.md lists is on /metrics from the start (the histograms and command
// counts once something was measured), parsed by Prometheus's own text parser.
func TestMetricsFamiliesExist(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{})
	c := gatewaytest.Dial(t, s.addr)
	c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
	c.Do("reserve\r\n", "RESERVED {n} 1\r\nx\r\n")
	c.Do("delete 1\r\n", "DELETED\r\n")
	families := scrape(t, s.http)
	for _, name := range []string{
		"beangate_commands_total", "beangate_command_duration_seconds", "beangate_reserve_wait_seconds",
		"beangate_job_ready_wait_seconds", "beangate_job_processing_seconds",
		"beangate_connections", "beangate_connections_accepted_total", "beangate_connections_handshaking",
		"beangate_connections_rejected_total", "beangate_producers", "beangate_workers",
		"beangate_waiting_reserves", "beangate_ready",
		"beangate_store_up", "beangate_store_jobs", "beangate_store_urgent_jobs", "beangate_store_jobs_put_total",
		"beangate_store_job_timeouts_total", "beangate_store_tubes", "beangate_store_tube_jobs",
		"beangate_store_tube_jobs_truncated", "beangate_store_scrape_duration_seconds",
		"beangate_backend_call_duration_seconds", "beangate_backend_call_errors_total",
		"beangate_store_tube_ready_age_seconds",
	} {
		require.Contains(t, families, name)
	}
}

// Every command's ok count is exported from the start, at 0, so that rate() over it works before
// its first use; an error appears once it happened, and a line that is no command is never ok.
func TestCommandCountsStartAtZero(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{})
	m := scrape(t, s.http)
	for _, name := range gateway.CommandNames() {
		ok := sample(m, "beangate_commands_total", labels{"command": name, "result": "ok"})
		if name == "unknown" {
			require.Nil(t, ok)
			continue
		}
		require.NotNil(t, ok, "command %q", name)
		require.Zero(t, ok.GetCounter().GetValue())
	}
	require.Nil(t, sample(m, "beangate_commands_total", labels{"result": "not_found"}))
	c := gatewaytest.Dial(t, s.addr)
	c.Do("delete 7\r\n", "NOT_FOUND\r\n")
	m = scrape(t, s.http)
	require.Equal(t, 1.0, value(m, "beangate_commands_total", labels{"command": "delete", "result": "not_found"}))
	require.NotNil(t, sample(m, "beangate_commands_total", labels{"command": "delete", "result": "ok"}))
}

// The ready age of each tube is how long its next job has been ready: it grows while nobody
// reserves (where the ready-wait histogram, fed by reserves, stays silent), and is 0 once the
// tube has no ready job.
func TestTubeReadyAge(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := startOpsServerOn(t, memory.New(memory.Options{Clock: clock}), 100, gateway.Config{})
	c := gatewaytest.Dial(t, s.addr)
	c.Do("use jobs\r\n", "USING jobs\r\n")
	c.Do("put 5 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
	clock.Advance(90 * time.Second)
	c.Do("put 1 0 60 1\r\ny\r\n", "INSERTED 2\r\n")
	clock.Advance(10 * time.Second)
	age := func() map[string]float64 {
		out := map[string]float64{}
		for _, m := range scrape(t, s.http)["beangate_store_tube_ready_age_seconds"].GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
		return out
	}
	require.Equal(t, map[string]float64{"default": 0, "jobs": 10}, age(), "the job a reserve takes next")
	clock.Advance(time.Hour)
	require.Equal(t, map[string]float64{"default": 0, "jobs": 3610}, age(), "no worker: it grows")
	c.Do("watch jobs\r\n", "WATCHING 2\r\n")
	c.Do("reserve-with-timeout 0\r\n", "RESERVED 2 1\r\ny\r\n")
	require.Equal(t, map[string]float64{"default": 0, "jobs": 3700}, age())
	c.Do("reserve-with-timeout 0\r\n", "RESERVED 1 1\r\nx\r\n")
	require.Equal(t, map[string]float64{"default": 0, "jobs": 0}, age())
	require.NotZero(t, value(scrape(t, s.http), "beangate_backend_call_duration_seconds", labels{"op": "ready_ages"}),
		"the scrape's store call is measured")
}

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(ops.NewBuildInfo("v1.2.3", "abc123", "redis"))
	families, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, families, 1)
	m := families[0].GetMetric()[0]
	require.Equal(t, "beangate_build_info", families[0].GetName())
	require.Equal(t, 1.0, m.GetGauge().GetValue())
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	require.Equal(t, map[string]string{"version": "v1.2.3", "revision": "abc123", "goversion": runtime.Version(), "backend": "redis"}, got)
}

// The figures move as commands run: counts by command and result, the histograms, the
// connection gauges, the backend calls and the store's figures.
func TestMetricsMoveAsCommandsRun(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{})
	before := scrape(t, s.http)
	require.Zero(t, value(before, "beangate_commands_total", labels{"command": "put", "result": "ok"}))

	producer := gatewaytest.Dial(t, s.addr)
	producer.Do("use jobs\r\n", "USING jobs\r\n")
	worker := gatewaytest.Dial(t, s.addr)
	worker.Do("watch jobs\r\n", "WATCHING 2\r\n")
	worker.Send("reserve\r\n") // waits: the put below wakes it
	require.Eventually(t, func() bool {
		return value(scrape(t, s.http), "beangate_waiting_reserves", nil) == 1
	}, 5*time.Second, 10*time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	producer.Do("put 0 0 60 5\r\nhello\r\n", "INSERTED 1\r\n")
	worker.Expect("RESERVED 1 5\r\nhello\r\n")
	time.Sleep(10 * time.Millisecond)
	worker.Do("delete 1\r\n", "DELETED\r\n")
	worker.Do("delete 1\r\n", "NOT_FOUND\r\n")
	producer.Do("put 0 0 60 70000\r\n"+strings.Repeat("x", 70000)+"\r\n", "JOB_TOO_BIG\r\n")
	producer.Do("frobnicate\r\n", "UNKNOWN_COMMAND\r\n")
	producer.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 2\r\n")

	m := scrape(t, s.http)
	for _, tt := range []struct {
		name   string
		labels labels
		want   float64
	}{
		{"beangate_commands_total", labels{"command": "put", "result": "ok"}, 2},
		{"beangate_commands_total", labels{"command": "put", "result": "job_too_big"}, 1},
		{"beangate_commands_total", labels{"command": "reserve", "result": "ok"}, 1},
		{"beangate_commands_total", labels{"command": "delete", "result": "ok"}, 1},
		{"beangate_commands_total", labels{"command": "delete", "result": "not_found"}, 1},
		{"beangate_commands_total", labels{"command": "unknown", "result": "unknown_command"}, 1},
		{"beangate_command_duration_seconds", labels{"command": "put"}, 3},
		{"beangate_reserve_wait_seconds", nil, 1},
		{"beangate_job_ready_wait_seconds", labels{"tube": "jobs"}, 1},
		{"beangate_job_processing_seconds", labels{"tube": "jobs"}, 1},
		{"beangate_connections", nil, 2},
		{"beangate_connections_accepted_total", nil, 2},
		{"beangate_producers", nil, 1},
		{"beangate_workers", nil, 1},
		{"beangate_waiting_reserves", nil, 0},
		{"beangate_ready", nil, 1},
		{"beangate_store_up", nil, 1},
		{"beangate_store_jobs", labels{"state": "ready"}, 1},
		{"beangate_store_jobs_put_total", nil, 2},
		{"beangate_backend_call_duration_seconds", labels{"op": "put"}, 2},
		{"beangate_backend_call_duration_seconds", labels{"op": "delete"}, 2},
		{"beangate_backend_call_errors_total", labels{"op": "delete"}, 0}, // NOT_FOUND is an answer
	} {
		require.Equal(t, tt.want, value(m, tt.name, tt.labels), "%s%v", tt.name, tt.labels)
	}
	// The reserve waited at least the 20 ms before the put; the job was ready for next to no
	// time (handed over by the put); it was held at least 10 ms before its delete.
	wait := sample(m, "beangate_reserve_wait_seconds", nil).Histogram
	require.GreaterOrEqual(t, wait.GetSampleSum(), 0.02)
	require.Less(t, sample(m, "beangate_job_ready_wait_seconds", labels{"tube": "jobs"}).Histogram.GetSampleSum(), 0.01)
	require.GreaterOrEqual(t, sample(m, "beangate_job_processing_seconds", labels{"tube": "jobs"}).Histogram.GetSampleSum(), 0.01)
}

// A job's time in the ready state is measured from when it became ready to the reserve.
func TestReadyWaitIsTheTimeReady(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{})
	c := gatewaytest.Dial(t, s.addr)
	c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
	time.Sleep(100 * time.Millisecond)
	c.Do("reserve-with-timeout 0\r\n", "RESERVED 1 1\r\nx\r\n")
	h := sample(scrape(t, s.http), "beangate_job_ready_wait_seconds", labels{"tube": "default"}).Histogram
	require.Equal(t, uint64(1), h.GetSampleCount())
	require.GreaterOrEqual(t, h.GetSampleSum(), 0.1)
	require.Less(t, h.GetSampleSum(), 5.0)
}

var statsTubeLine = regexp.MustCompile(`(?m)^current-jobs-(ready|reserved|delayed|buried): (\d+)$`)

// The per-tube gauges are the store's figures: they agree with stats-tube, tube by tube.
func TestTubeGaugesAgreeWithStatsTube(t *testing.T) {
	t.Parallel()
	s := startOpsServer(t, 100, gateway.Config{})
	c := gatewaytest.Dial(t, s.addr)
	tubes := []string{"alpha", "beta", "gamma"}
	for i, tube := range tubes {
		c.Do("use "+tube+"\r\n", "USING "+tube+"\r\n")
		c.Do("watch "+tube+"\r\n", "WATCHING {n}\r\n")
		for range 3 + i {
			c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
		}
		c.Do("put 0 100 60 1\r\nx\r\n", "INSERTED {n}\r\n") // delayed
		c.Do("ignore "+tube+"\r\n", "WATCHING {n}\r\n")
	}
	c.Do("watch beta\r\n", "WATCHING 2\r\n")
	c.Do("ignore default\r\n", "WATCHING 1\r\n")
	reply := c.Do("reserve\r\n", "RESERVED {n} 1\r\nx\r\n")
	id := regexp.MustCompile(`\d+`).FindString(reply)
	c.Do("bury "+id+" 0\r\n", "BURIED\r\n")
	c.Do("reserve\r\n", "RESERVED {n} 1\r\nx\r\n") // one reserved in beta

	m := scrape(t, s.http)
	for _, tube := range append(tubes, "default") {
		reply := c.Do("stats-tube "+tube+"\r\n", "OK {n}\r\n---\n{*}\n"+
			strings.Repeat("{*}\n", 13)+"\r\n")
		for _, match := range statsTubeLine.FindAllStringSubmatch(reply, -1) {
			want, err := strconv.ParseFloat(match[2], 64)
			require.NoError(t, err)
			require.Equal(t, want, value(m, "beangate_store_tube_jobs", labels{"tube": tube, "state": match[1]}),
				"tube %s state %s", tube, match[1])
		}
	}
	require.Equal(t, 1.0, value(m, "beangate_store_tube_jobs", labels{"tube": "beta", "state": "buried"}))
	require.Equal(t, 1.0, value(m, "beangate_store_tube_jobs", labels{"tube": "beta", "state": "reserved"}))
	require.Equal(t, 0.0, value(m, "beangate_store_tube_jobs_truncated", nil))
}

// Beyond the cap, per-tube series stop at the first tubes by name, the truncation gauge says
// so, and the per-tube histograms of further tubes share tube="*other*".
func TestTubeCapTruncates(t *testing.T) {
	t.Parallel()
	const limit = 3
	s := startOpsServer(t, limit, gateway.Config{})
	c := gatewaytest.Dial(t, s.addr)
	for i := range 6 {
		tube := fmt.Sprintf("t%d", i)
		c.Do("use "+tube+"\r\n", "USING "+tube+"\r\n")
		c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n")
		c.Do("watch "+tube+"\r\n", "WATCHING {n}\r\n")
		c.Do("reserve\r\n", "RESERVED {n} 1\r\nx\r\n")
	}
	m := scrape(t, s.http)
	require.Equal(t, 1.0, value(m, "beangate_store_tube_jobs_truncated", nil))
	require.Equal(t, 7.0, value(m, "beangate_store_tubes", nil)) // default too
	tubes := map[string]int{}
	for _, metric := range m["beangate_store_tube_jobs"].GetMetric() {
		for _, lp := range metric.GetLabel() {
			if lp.GetName() == "tube" {
				tubes[lp.GetValue()]++
			}
		}
	}
	require.Equal(t, map[string]int{"default": 4, "t0": 4, "t1": 4}, tubes)

	var histTubes []string
	for _, metric := range m["beangate_job_ready_wait_seconds"].GetMetric() {
		histTubes = append(histTubes, metric.GetLabel()[0].GetValue())
	}
	require.ElementsMatch(t, []string{"t0", "t1", "t2", "*other*"}, histTubes)
	require.Equal(t, 3.0, value(m, "beangate_job_ready_wait_seconds", labels{"tube": "*other*"}))
}

// A whole scrape (GET /metrics over loopback, the text read to its end) of a memory store with
// 10,000 tubes, all exported: the target is < 100 ms.
// go test -run '^$' -bench Scrape10000Tubes ./gateway/ops
func BenchmarkScrape10000Tubes(b *testing.B) {
	const tubes = 10000
	s := startOpsServer(b, tubes, gateway.Config{})
	fillTubes(b, s.store, tubes)
	client := http.Client{Timeout: 10 * time.Second}
	for b.Loop() {
		resp, err := client.Get(s.http + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil || n < 40000*40 {
			b.Fatalf("read %d bytes: %v", n, err)
		}
	}
}

// fillTubes puts one job in each of n tubes, straight into the store.
func fillTubes(tb testing.TB, store backend.Backend, n int) {
	ctx := context.Background()
	for i := range n {
		_, err := store.Put(ctx, backend.PutParams{Tube: fmt.Sprintf("tube-%05d", i), TTR: time.Minute, Body: []byte("x")})
		require.NoError(tb, err)
	}
}

// The same 10,000-tube store scraped whole: every tube has its four series.
func TestScrape10000TubesIsComplete(t *testing.T) {
	t.Parallel()
	const tubes = 10000
	s := startOpsServer(t, tubes+1, gateway.Config{})
	fillTubes(t, s.store, tubes)
	m := scrape(t, s.http)
	require.Len(t, m["beangate_store_tube_jobs"].GetMetric(), 4*(tubes+1))
	require.Equal(t, 0.0, value(m, "beangate_store_tube_jobs_truncated", nil))
	require.Equal(t, 1.0, value(m, "beangate_store_tube_jobs", labels{"tube": "tube-09999", "state": "ready"}))
}
