package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"
)

// worker is an unmodified go-beanstalk client taking every job of a tube and deleting it,
// noting when each came.
type worker struct {
	mu   sync.Mutex
	seen []time.Time
	stop chan struct{}
	done chan struct{}
}

func startWorker(t *testing.T, addr net.Addr, tube string) *worker {
	t.Helper()
	conn, err := beanstalk.DialTimeout("tcp", addr.String(), 5*time.Second)
	require.NoError(t, err)
	w := &worker{stop: make(chan struct{}), done: make(chan struct{})}
	ts := beanstalk.NewTubeSet(conn, tube)
	go func() {
		defer close(w.done)
		defer conn.Close()
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			id, _, err := ts.Reserve(200 * time.Millisecond)
			if errors.Is(err, beanstalk.ErrTimeout) {
				continue
			}
			if err != nil {
				return // the gateway stopped
			}
			w.mu.Lock()
			w.seen = append(w.seen, time.Now())
			w.mu.Unlock()
			_ = conn.Delete(id)
		}
	}()
	t.Cleanup(w.close)
	return w
}

func (w *worker) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// between counts the jobs that came in (from, to].
func (w *worker) between(from, to time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, at := range w.seen {
		if at.After(from) && !at.After(to) {
			n++
		}
	}
	return n
}

func (w *worker) first() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) == 0 {
		return time.Time{}
	}
	return w.seen[0]
}

// sleepUntil sleeps until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// With every: 1s and three gateways sharing a store, each tick puts one job for the fleet, not
// one per gateway; with every gateway stopped for 5 s, the first one back puts one catch-up
// job, not one per missed tick. The memory store, kept in one process, has one gateway, which
// keeps its schedules beside its binlog.
func TestScheduleFiresOncePerTickForTheFleet(t *testing.T) {
	t.Parallel()
	memoryStore := func(t *testing.T) []string { return []string{"-b", t.TempDir()} }
	shared := func(store func(t *testing.T) (string, func() int)) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			url, _ := store(t)
			return []string{"--backend", url}
		}
	}
	for _, st := range []struct {
		name     string
		store    func(t *testing.T) []string // the server's arguments for the store
		gateways int
	}{{"memory", memoryStore, 1}, {"redis", shared(redisStore), 3}, {"postgres", shared(postgresStore), 3}} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			storeArgs := st.store(t)
			config := filepath.Join(t.TempDir(), "beangate.yaml")
			require.NoError(t, os.WriteFile(config, []byte(`
schedules:
  - name: heartbeat
    tube: beats
    every: 1s
    body: beat
    ttr: 10s
`), 0o600))
			var gateways []*runningServer
			for range st.gateways {
				gateways = append(gateways, startServer(t, append([]string{"-p", "0", "--config", config}, storeArgs...)...))
			}
			w := startWorker(t, gateways[0].addr, "beats")
			// Counted over whole seconds, from mid-second to mid-second, so that no tick is near
			// either end of the window.
			from := time.Now().Truncate(time.Second).Add(1500 * time.Millisecond)
			to := from.Add(10 * time.Second)
			sleepUntil(to.Add(200 * time.Millisecond))
			n := w.between(from, to)
			require.InDelta(t, 10, n, 1, "10 ticks in 10 s for %d gateways: %d jobs", st.gateways, n)
			w.close()

			for _, g := range gateways {
				g.cancel()
				require.Equal(t, exitOK, g.waitExit(t, 10*time.Second))
			}
			time.Sleep(5 * time.Second)
			back := startServer(t, append([]string{"-p", "0", "--config", config}, storeArgs...)...)
			w = startWorker(t, back.addr, "beats")
			require.Eventually(t, func() bool { return !w.first().IsZero() }, 5*time.Second, 10*time.Millisecond)
			caughtUp := w.first()
			// Until mid-second after the next tick: one job for the ticks missed, then one per tick.
			end := caughtUp.Truncate(time.Second).Add(1500 * time.Millisecond)
			sleepUntil(end.Add(200 * time.Millisecond))
			ticks := int(end.Truncate(time.Second).Sub(caughtUp.Truncate(time.Second)) / time.Second)
			require.Equal(t, 1+ticks, w.between(caughtUp.Add(-time.Nanosecond), end),
				"one job for the 5 s every gateway was down, then one per tick")
		})
	}
}

// A bad cron expression is refused with the reason: at start (exit 5, as every configuration
// mistake), on SIGHUP (the schedules set before stay), and through the API (400).
func TestBadCronIsRefusedAtStartOnSIGHUPAndThroughTheAPI(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "beangate.yaml")
	bad := []byte(`
schedules:
  - name: report
    tube: reports
    cron: "0 * * *"
`)
	require.NoError(t, os.WriteFile(config, bad, 0o600))
	s := launchServer(t, "-p", "0", "--config", config)
	require.Equal(t, exitUsage, s.waitExit(t, 10*time.Second))
	require.Contains(t, s.stderr.String(), `schedules[0]: bad schedule "report": cron "0 * * *": expected exactly 5 fields, found 4`)

	require.NoError(t, os.WriteFile(config, []byte(`
schedules:
  - name: report
    tube: reports
    cron: "0 * * * *"
`), 0o600))
	s = startServer(t, "-p", "0", "--http", "127.0.0.1:0", "--config", config, "--console-password-hash", consoleHash(t))
	base := "http://" + s.opsAddr.String()
	get := func(path string) string {
		code, body := opsCall(t, "GET", base, path, "s3cret", "", "")
		require.Equal(t, 200, code, body)
		return body
	}
	before := get("/api/schedules")
	require.Contains(t, before, `"cron":"0 * * * *"`)
	require.NoError(t, os.WriteFile(config, []byte(strings.Replace(string(bad), "report", "other", 1)), 0o600))
	s.signals <- syscall.SIGHUP
	require.Eventually(t, func() bool {
		return strings.Contains(s.stderr.String(), "SIGHUP: configuration not reloaded; the schedules stay as they were")
	}, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, s.stderr.String(), `cron \"0 * * *\": expected exactly 5 fields, found 4`)
	after := get("/api/schedules")
	require.JSONEq(t, before, after, "nothing changed")

	// A good file on SIGHUP is set, the others kept.
	require.NoError(t, os.WriteFile(config, []byte(`
schedules:
  - name: other
    tube: reports
    every: 1h
`), 0o600))
	s.signals <- syscall.SIGHUP
	require.Eventually(t, func() bool {
		return strings.Contains(s.stderr.String(), "SIGHUP: schedules reloaded")
	}, 5*time.Second, 10*time.Millisecond)
	after = get("/api/schedules")
	require.Contains(t, after, `"name":"other"`)
	require.Contains(t, after, `"name":"report"`)

	csrf := csrfField.FindStringSubmatch(get("/api/info"))
	require.NotNil(t, csrf)
	code, body := opsCall(t, "POST", base, "/api/schedule", "s3cret", csrf[1],
		`{"schedule":{"name":"nightly","tube":"reports","cron":"0 25 * * *"}}`)
	require.Equal(t, 400, code)
	require.Contains(t, body, `bad schedule \"nightly\": cron \"0 25 * * *\": end of range (25) above maximum (23)`)
	code, _ = opsCall(t, "POST", base, "/api/schedule", "s3cret", csrf[1],
		`{"schedule":{"name":"nightly","tube":"reports","cron":"0 2 * * *","timezone":"Europe/Paris"}}`)
	require.Equal(t, 200, code)
	after = get("/api/schedules")
	require.Contains(t, after, `"name":"nightly"`)
	require.Contains(t, after, `"next_run":"`)
}
