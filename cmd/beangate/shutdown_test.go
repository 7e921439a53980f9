package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The graceful stop under load: many connections put, reserve and delete while the gateway is
// told to stop (SIGTERM, SIGINT, or a rolling restart of one of two gateways on a shared store).
// Every command written before the signal is answered with its real reply (never
// INTERNAL_ERROR); a reserve still waiting then answers TIMED_OUT; each connection then ends
// with a clean EOF (no reset); no connection panics; and a gateway started afterwards on the
// same store finds every acknowledged job that was not deleted, ready, and none of the deleted
// ones.

// loadConns connections put, reserve and delete at once.
const loadConns = 32

// loadStore is a store the load tests run on.
type loadStore struct {
	name string
	// args are the server flags opening a namespace of the test's own, the same for every
	// gateway of the test.
	args   func(t *testing.T) []string
	shared bool // two gateways can serve it at once
	// rounds is how many stops under load a test makes. Before the read that raced the stop was
	// fixed, a connection panicked in one stop in ten to thirty, so the rounds of all stores
	// together (the cheap memory ones carry the number) caught it in most runs; the stop now
	// takes that read on every connection.
	rounds int
}

var loadStores = []loadStore{
	{"memory with a binlog", func(t *testing.T) []string { return []string{"-b", t.TempDir()} }, false, 16},
	{"Redis", func(t *testing.T) []string { url, _ := redisStore(t); return []string{"--backend", url} }, true, 6},
	{"PostgreSQL", func(t *testing.T) []string { url, _ := postgresStore(t); return []string{"--backend", url} }, true, 6},
}

func TestSignalStopsGracefullyUnderLoad(t *testing.T) {
	t.Parallel()
	for _, st := range loadStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-p", "0", "--shutdown-timeout", "20s"}, st.args(t)...)
			for round := range st.rounds {
				sig := []os.Signal{syscall.SIGTERM, syscall.SIGINT}[round%2]
				t.Run(fmt.Sprintf("%s %d", sig, round), func(t *testing.T) {
					l := newLedger()
					s := startServer(t, args...)
					var stopping atomic.Bool
					clients := l.startClients(t, s.addr, fmt.Sprintf("load%d", round), loadConns, &stopping, context.Background())
					waiters := startWaiters(t, s.addr, fmt.Sprintf("empty%d", round), 2)
					l.awaitLoad(t, 200)

					stopping.Store(true) // before the signal: what was written by now must be answered
					s.signals <- sig
					require.Equal(t, exitOK, s.waitExit(t, 20*time.Second))
					awaitClients(t, clients)
					for _, w := range waiters {
						w.expectTimedOutAndEOF(t, l)
					}
					l.check(t, s)
					l.verifyStore(t, args, fmt.Sprintf("load%d", round))
				})
			}
		})
	}
}

// A rolling restart: of two gateways on a shared store, under load on both, one is stopped
// and started again. Its clients are answered as on any stop; the other gateway's clients see
// nothing of it (every command answered, no connection ended).
func TestRollingRestartUnderLoad(t *testing.T) {
	t.Parallel()
	for _, st := range loadStores {
		if !st.shared {
			continue
		}
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-p", "0", "--shutdown-timeout", "20s"}, st.args(t)...)
			for round := range 2 {
				t.Run(strconv.Itoa(round), func(t *testing.T) {
					l := newLedger()
					tube := fmt.Sprintf("rolling%d", round)
					restarted, other := startServer(t, args...), startServer(t, args...)
					var stopping, never atomic.Bool
					keepOn, stopKeepOn := context.WithCancel(context.Background())
					defer stopKeepOn()
					stopped := l.startClients(t, restarted.addr, tube, loadConns, &stopping, context.Background())
					kept := l.startClients(t, other.addr, tube, loadConns, &never, keepOn)
					waiters := startWaiters(t, restarted.addr, tube+"empty", 1)
					l.awaitLoad(t, 200)

					stopping.Store(true)
					restarted.signals <- syscall.SIGTERM
					require.Equal(t, exitOK, restarted.waitExit(t, 20*time.Second))
					awaitClients(t, stopped)
					for _, w := range waiters {
						w.expectTimedOutAndEOF(t, l)
					}
					l.check(t, restarted)

					again := startServer(t, args...)
					fresh := l.startClients(t, again.addr, tube, loadConns/2, &never, keepOn)
					awaitAnswers(t, append(kept, fresh...), 10) // both gateways serve
					stopKeepOn()
					kept = append(kept, fresh...)
					awaitClients(t, kept)
					l.check(t, other)
					l.check(t, again)
					again.cancel()
					require.Equal(t, exitOK, again.waitExit(t, 20*time.Second))
					other.cancel()
					require.Equal(t, exitOK, other.waitExit(t, 20*time.Second))
					l.verifyStore(t, args, tube)
				})
			}
		})
	}
}

// ledger gathers what the load's clients were told, and what went wrong.
type ledger struct {
	mu       sync.Mutex
	put      map[uint64]string // acknowledged puts: id → body
	deleted  map[uint64]bool   // acknowledged deletes
	problems []string
	answered atomic.Int64 // replies received
}

func newLedger() *ledger {
	return &ledger{put: map[uint64]string{}, deleted: map[uint64]bool{}}
}

func (l *ledger) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.problems) < 20 {
		l.problems = append(l.problems, fmt.Sprintf(format, args...))
	}
}

// awaitLoad waits until n replies have been received in all.
func (l *ledger) awaitLoad(t *testing.T, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return l.answered.Load() >= n }, 20*time.Second, time.Millisecond,
		"the load did not get going: %d replies; problems: %v", l.answered.Load(), l.problems)
}

// check fails on the problems the clients met and on what the server logged of them.
func (l *ledger) check(t *testing.T, s *runningServer) {
	t.Helper()
	log := s.stderr.String()
	require.NotContains(t, log, "panicked", "a connection panicked")
	require.NotContains(t, log, "backend failed")
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Empty(t, l.problems)
}

// verifyStore starts a gateway on the store and checks that tube holds every acknowledged job
// not deleted, ready and with its body, and nothing else: a command the gateway carried out
// was answered, so no job put without an acknowledgement, nor one acknowledged as deleted, is
// there. The latest deletes are also looked up by id. Then it stops the gateway.
func (l *ledger) verifyStore(t *testing.T, args []string, tube string) {
	t.Helper()
	s := startServer(t, args...)
	c := dial(t, s.addr)
	var kept, deleted []uint64
	for id := range l.put {
		if !l.deleted[id] {
			kept = append(kept, id)
		}
	}
	for id := range l.deleted {
		deleted = append(deleted, id)
	}
	slices.Sort(deleted)
	deleted = deleted[max(0, len(deleted)-100):]
	send := bytes.NewBufferString("stats-tube " + tube + "\r\n")
	for _, id := range kept {
		fmt.Fprintf(send, "peek %d\r\nstats-job %d\r\n", id, id)
	}
	for _, id := range deleted {
		fmt.Fprintf(send, "peek %d\r\n", id)
	}
	_, err := c.Write(send.Bytes())
	require.NoError(t, err)
	stats := readOK(t, c.r)
	for _, want := range []string{
		fmt.Sprintf("\ncurrent-jobs-ready: %d\n", len(kept)), "\ncurrent-jobs-reserved: 0\n",
		"\ncurrent-jobs-delayed: 0\n", "\ncurrent-jobs-buried: 0\n",
	} {
		require.Contains(t, stats, want)
	}
	for _, id := range kept {
		require.Equal(t, fmt.Sprintf("FOUND %d %d\r\n", id, len(l.put[id])), readLine(t, c.r), "acknowledged job %d", id)
		require.Equal(t, l.put[id]+"\r\n", readLine(t, c.r))
		require.Contains(t, readOK(t, c.r), "\nstate: ready\n", "job %d is not back to ready", id)
	}
	for _, id := range deleted {
		require.Equal(t, "NOT_FOUND\r\n", readLine(t, c.r), "deleted job %d", id)
	}
	_ = c.Close()
	s.cancel()
	require.Equal(t, exitOK, s.waitExit(t, 20*time.Second))
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	return line
}

// readOK reads an "OK <bytes>" reply and returns its data.
func readOK(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line := readLine(t, r)
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "OK "), "\r\n"))
	require.NoError(t, err, "reply %q", line)
	data := make([]byte, n+2)
	_, err = io.ReadFull(r, data)
	require.NoError(t, err)
	return string(data[:n])
}

// loadClient is one connection putting jobs, then reserving and deleting as many, in a loop
// until the server ends it or ctx ends.
type loadClient struct {
	l        *ledger
	nc       net.Conn
	r        *bufio.Reader
	name     string
	reserve  string       // "reserve" (which may wait) or "reserve-with-timeout 0"
	pipeline int          // puts written at once
	stopping *atomic.Bool // set before the gateway is told to stop
	answered atomic.Int64
	done     chan struct{}
}

// startClients starts n load clients on addr using tube, all at once once connected: half
// reserve with "reserve-with-timeout 1" (which may wait), half with "reserve-with-timeout 0",
// and one in four writes four puts at once.
func (l *ledger) startClients(t *testing.T, addr net.Addr, tube string, n int, stopping *atomic.Bool, ctx context.Context) []*loadClient {
	t.Helper()
	clients := make([]*loadClient, n)
	for i := range clients {
		c := &loadClient{l: l, name: fmt.Sprintf("%s-%s-%d", tube, addr, i), reserve: "reserve-with-timeout 0",
			pipeline: 1, stopping: stopping, done: make(chan struct{})}
		if i%2 == 0 {
			c.reserve = "reserve-with-timeout 1"
		}
		if i%4 == 1 {
			c.pipeline = 4
		}
		cl := dial(t, addr)
		require.NoError(t, cl.SetDeadline(time.Now().Add(60*time.Second)))
		c.nc, c.r = cl.Conn, cl.r
		_, err := io.WriteString(cl, "use "+tube+"\r\nwatch "+tube+"\r\nignore default\r\n")
		require.NoError(t, err)
		clients[i] = c
	}
	for _, c := range clients {
		for _, want := range []string{"USING", "WATCHING 2", "WATCHING 1"} {
			require.Regexp(t, "^"+want+"\\b", readLine(t, c.r))
		}
	}
	for _, c := range clients {
		go c.run(ctx)
	}
	return clients
}

// awaitAnswers waits until each client has received n more replies.
func awaitAnswers(t *testing.T, clients []*loadClient, n int64) {
	t.Helper()
	from := make([]int64, len(clients))
	for i, c := range clients {
		from[i] = c.answered.Load()
	}
	for i, c := range clients {
		require.Eventually(t, func() bool { return c.answered.Load() >= from[i]+n }, 20*time.Second, time.Millisecond,
			"client %s got %d replies", c.name, c.answered.Load()-from[i])
	}
}

func awaitClients(t *testing.T, clients []*loadClient) {
	t.Helper()
	for _, c := range clients {
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("client %s did not end", c.name)
		}
	}
}

func (c *loadClient) run(ctx context.Context) {
	defer close(c.done)
	defer c.nc.Close()
	for n := 0; ctx.Err() == nil; n++ {
		var send bytes.Buffer
		bodies := make([]string, c.pipeline)
		for i := range bodies {
			bodies[i] = fmt.Sprintf("%s-%d-%d", c.name, n, i)
			fmt.Fprintf(&send, "put 0 0 60 %d\r\n%s\r\n", len(bodies[i]), bodies[i])
		}
		before, ok := c.send(send.String())
		for _, body := range bodies {
			var id uint64
			if ok = ok && c.reply("put", before, "INSERTED %d\r\n", &id); !ok {
				return
			}
			c.l.mu.Lock()
			c.l.put[id] = body
			c.l.mu.Unlock()
		}
		for range bodies {
			before, ok = c.send(c.reserve + "\r\n")
			line, ok := c.readReply(c.reserve, before, ok)
			if !ok || line == "TIMED_OUT\r\n" {
				if !ok {
					return
				}
				continue
			}
			var id uint64
			var size int
			if _, err := fmt.Sscanf(line, "RESERVED %d %d\r\n", &id, &size); err != nil {
				c.l.problem("%s: %s answered %q", c.name, c.reserve, line)
				return
			}
			body := make([]byte, size+2)
			if _, err := io.ReadFull(c.r, body); err != nil {
				c.l.problem("%s: %s's body: %v", c.name, c.reserve, err)
				return
			}
			before, ok = c.send(fmt.Sprintf("delete %d\r\n", id))
			if ok = ok && c.reply("delete", before, "DELETED\r\n"); !ok {
				return
			}
			c.l.mu.Lock()
			c.l.deleted[id] = true
			c.l.mu.Unlock()
		}
	}
}

// send writes s and reports whether it was written before the gateway was told to stop.
func (c *loadClient) send(s string) (before, ok bool) {
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.l.problem("%s: writing %q: %v", c.name, s, err)
		return false, false
	}
	return !c.stopping.Load(), true
}

// reply reads cmd's reply, which must match format (filling args).
func (c *loadClient) reply(cmd string, before bool, format string, args ...any) bool {
	line, ok := c.readReply(cmd, before, true)
	if !ok {
		return false
	}
	if _, err := fmt.Sscanf(line, format, args...); err != nil {
		c.l.problem("%s: %s answered %q", c.name, cmd, line)
		return false
	}
	return true
}

// readReply reads a reply line. The connection's end is fine only as a clean EOF, and only for a
// command written after the gateway was told to stop.
func (c *loadClient) readReply(cmd string, before, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	line, err := c.r.ReadString('\n')
	switch {
	case err == nil && line == "INTERNAL_ERROR\r\n":
		c.l.problem("%s: %s answered INTERNAL_ERROR", c.name, cmd)
		return "", false
	case err == nil:
		c.l.answered.Add(1)
		c.answered.Add(1)
		return line, true
	case errors.Is(err, io.EOF) && line == "" && !before:
		return "", false // the stop's clean end
	case errors.Is(err, io.EOF) && line == "":
		c.l.problem("%s: %s, written before the stop, got no reply (EOF)", c.name, cmd)
	default:
		c.l.problem("%s: %s: %v after %q", c.name, cmd, err, line)
	}
	return "", false
}

// waiter is a connection whose reserve waits on an empty tube when the gateway is stopped.
type waiter struct{ *client }

func startWaiters(t *testing.T, addr net.Addr, tube string, n int) []waiter {
	t.Helper()
	ws := make([]waiter, n)
	for i := range ws {
		ws[i] = waiter{dial(t, addr)}
		require.NoError(t, ws[i].SetDeadline(time.Now().Add(60*time.Second)))
		require.Equal(t, "WATCHING 2\r\n", ws[i].roundTrip(t, "watch "+tube+"\r\n"))
		require.Equal(t, "WATCHING 1\r\n", ws[i].roundTrip(t, "ignore default\r\n"))
		_, err := io.WriteString(ws[i], "reserve\r\n")
		require.NoError(t, err)
	}
	return ws
}

// expectTimedOutAndEOF: the waiting reserve answers TIMED_OUT, then the connection ends cleanly.
func (w waiter) expectTimedOutAndEOF(t *testing.T, l *ledger) {
	t.Helper()
	rest, err := io.ReadAll(w.r)
	_ = w.Close() // the gateway lingers until the client closes too
	if err != nil || string(rest) != "TIMED_OUT\r\n" {
		l.problem("a waiting reserve got %q and then %v, want TIMED_OUT and EOF", rest, err)
	}
}
