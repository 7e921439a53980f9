package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/postgres/pgtest"
)

// The lines of the server's log from byte offset from on, without the empty last one.
func (s *runningServer) logLines(from int) []string {
	out := s.stderr.String()[from:]
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// repeated returns the messages of lines, summaries aside, logged more than max times.
func repeated(lines []string, max int) map[string]int {
	seen := map[string]int{}
	for _, l := range lines {
		_, msg, ok := strings.Cut(l, " msg=")
		if !ok || strings.Contains(l, " failed in the last ") {
			continue
		}
		if strings.HasPrefix(msg, `"`) {
			msg, _, _ = strings.Cut(msg[1:], `"`)
		} else {
			msg, _, _ = strings.Cut(msg, " ")
		}
		seen[msg]++
	}
	for msg, n := range seen {
		if n <= max {
			delete(seen, msg)
		}
	}
	return seen
}

// countLines counts the lines holding part.
func countLines(lines []string, part string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, part) {
			n++
		}
	}
	return n
}

// producers put jobs through addr until stopped, counting the replies: one keeps its
// connection, the other reconnects after each INTERNAL_ERROR, as many clients do, so that
// sessions begin and end on a store that is down.
type producers struct {
	addr     net.Addr
	stopping atomic.Bool
	wg       sync.WaitGroup
	inserted atomic.Int64
	failed   atomic.Int64
}

func startProducers(addr net.Addr) *producers {
	p := &producers{addr: addr}
	for _, reconnect := range []bool{false, true} {
		p.wg.Go(func() { p.run(reconnect) })
	}
	return p
}

func (p *producers) run(reconnect bool) {
	const put = "put 0 0 60 17\r\nsecret-job-body-1\r\n"
	var c net.Conn
	var r *bufio.Reader
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	for !p.stopping.Load() {
		if c == nil {
			var err error
			if c, err = net.DialTimeout("tcp", p.addr.String(), time.Second); err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			r = bufio.NewReader(c)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		line := ""
		_, err := c.Write([]byte(put))
		if err == nil {
			line, err = r.ReadString('\n')
		}
		switch {
		case err != nil:
			_ = c.Close()
			c = nil
		case strings.HasPrefix(line, "INSERTED"):
			p.inserted.Add(1)
		default:
			p.failed.Add(1)
			if reconnect {
				_ = c.Close()
				c = nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (p *producers) stop() {
	p.stopping.Store(true)
	p.wg.Wait()
}

// A store outage under load does not flood the log: the store found unreachable once, the
// first failed call once, then one summary a second while the outage lasts, and the recovery
// once, and so is /readyz turning 503 and back; go-redis's own dial failures not at all, and no
// other line more than twice, though
// clients leave (their sessions cannot be ended) and the background work fails meanwhile.
// Nothing secret: no job body, no password.
// Not parallel: go-redis's logger is one per process, the last server's.
func TestStoreOutageLogsASummaryASecond(t *testing.T) {
	const outage = 4 * time.Second
	for _, tt := range []struct {
		name  string
		start func(t *testing.T) (url string, down, up func())
	}{
		{"Redis", func(t *testing.T) (string, func(), func()) {
			r := startPrivateRedis(t, "--requirepass", "s3cret-pw")
			return strings.Replace(r.url(), "redis://", "redis://:s3cret-pw@", 1) + "?prefix=outagelog&timeout=300ms", r.kill, r.start
		}},
		{"PostgreSQL", func(t *testing.T) (string, func(), func()) {
			c := pgtest.PrivateCluster(t)
			url := strings.Replace(c.URL(), "postgres@", "postgres:s3cret-pw@", 1) // trust: never asked for
			return url + "&schema=outagelog&command_timeout=300ms", c.Stop, c.Restart
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, down, up := tt.start(t)
			s := startServer(t, "-p", "0", "--backend", url, "--store-down-after", "1s")
			p := startProducers(s.addr)
			t.Cleanup(p.stop)
			require.Eventually(t, func() bool { return p.inserted.Load() > 20 }, 10*time.Second, 10*time.Millisecond, "no put succeeded; log:\n%s", s.stderr)
			var leaving []*client
			for range 20 {
				c := dial(t, s.addr)
				require.Equal(t, "USING leaving\r\n", c.roundTrip(t, "use leaving\r\n"))
				leaving = append(leaving, c)
			}
			from := len(s.stderr.String())

			down()
			downAt := time.Now()
			time.Sleep(outage / 2)
			for _, c := range leaving {
				_ = c.Close()
			}
			time.Sleep(outage / 2)
			failedInOutage := p.failed.Load()
			up()
			insertedBefore := p.inserted.Load()
			require.Eventually(t, func() bool { return p.inserted.Load() > insertedBefore+20 }, 15*time.Second, 10*time.Millisecond,
				"no put succeeded after the store came back; log:\n%s", s.stderr)
			failing := time.Since(downAt)
			time.Sleep(1500 * time.Millisecond) // the last summary is due within a second
			p.stop()

			lines := s.logLines(from)
			log := strings.Join(lines, "\n")
			t.Logf("%d puts failed, %d log lines:\n%s", p.failed.Load(), len(lines), log)
			require.Greater(t, failedInOutage, int64(200), "the producers kept the store busy")

			require.Equal(t, 1, countLines(lines, "store unreachable; failing calls at once until it answers"), log)
			require.Equal(t, 1, countLines(lines, "store reachable again"), log)
			firsts := countLines(lines, `msg="backend failed"`) + countLines(lines, `msg="beginning session failed"`) +
				countLines(lines, `msg="ending session failed`)
			require.Equal(t, 1, firsts, "the first failed call alone is logged in full:\n%s", log)
			summaries := countLines(lines, "store calls failed in the last 1s")
			require.GreaterOrEqual(t, summaries, int(outage/time.Second)-1, log)
			require.LessOrEqual(t, summaries, int(failing/time.Second)+1, log)
			require.Equal(t, 1+summaries, countLines(lines, "level=ERROR"), "no other error lines:\n%s", log)
			require.Zero(t, countLines(lines, "from=go-redis"), log)
			// A run of session ends that fail may end and another begin: the producer that
			// reconnects leaves as the outage begins, the 20 others later.
			require.Empty(t, repeated(lines, 2), "lines logged more than twice:\n%s", log)
			require.LessOrEqual(t, len(lines), summaries+15, log)
			require.Equal(t, 2, countLines(lines, "readiness changed"), "/readyz turned 503 and back, logged once each:\n%s", log)
			require.NotContains(t, s.stderr.String(), "secret-job-body", "job bodies are never logged")
			require.NotContains(t, s.stderr.String(), "s3cret-pw", "passwords are never logged")
		})
	}
}

// A gateway waiting for its store at start logs one line per attempt: go-redis's own dial
// failures do not repeat them. Not parallel: go-redis's logger is one per process.
func TestWaitingForTheStoreLogsOneLinePerAttempt(t *testing.T) {
	url := fmt.Sprintf("redis://:s3cret-pw@127.0.0.1:%d/0", freePort(t))
	s := launchServer(t, "-p", "0", "--backend", url)
	s.requireLogged(t, "attempt=3 ")
	s.cancel()
	require.Equal(t, exitOK, s.waitExit(t, 5*time.Second))
	lines := s.logLines(0)
	log := strings.Join(lines, "\n")
	attempts := countLines(lines, "store not reachable yet; trying again")
	require.GreaterOrEqual(t, attempts, 3, log)
	require.Equal(t, attempts, countLines(lines, "level=WARN"), "one warning per attempt, nothing else:\n%s", log)
	require.Zero(t, countLines(lines, "go-redis"), log)
	require.NotContains(t, log, "s3cret-pw")
}
