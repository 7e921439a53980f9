package memory_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway"
)

// Helpers for the binlog tests: real servers over TCP — Debian's beanstalkd and beangate's
// gateway on the memory backend — and a small protocol client.

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// startBeanstalkd runs bin with args on a free port; stop kills it (beanstalkd is crash-only:
// every acknowledged record is already written).
func startBeanstalkd(t *testing.T, bin string, args ...string) (addr string, stop func()) {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, append([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
	t.Cleanup(stop)
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return addr, stop
		}
		select {
		case <-exited:
			t.Fatalf("beanstalkd %v exited", args)
		default:
		}
		require.True(t, time.Now().Before(deadline), "beanstalkd did not start")
		time.Sleep(10 * time.Millisecond)
	}
}

// startBeangate serves a memory backend on the binlog in opts over TCP; stop shuts the server
// down gracefully and closes the backend (which truncates the current file).
func startBeangate(t *testing.T, opts binlog.Options, maxJobSize uint32) (addr string, stop func()) {
	t.Helper()
	b, err := memory.Open(memory.Options{Binlog: &opts})
	require.NoError(t, err)
	srv := gateway.NewServer(gateway.Config{Backend: b, MaxJobSize: maxJobSize})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		require.NoError(t, b.Close())
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// bs is a minimal beanstalk client for the tests.
type bs struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dialBS(t testing.TB, addr string) *bs {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &bs{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// do sends one command (with body when not nil) and returns its reply line and body.
func (c *bs) do(line string, body []byte) (string, []byte) {
	c.t.Helper()
	msg := []byte(line + "\r\n")
	if body != nil {
		msg = append(append(msg, body...), '\r', '\n')
	}
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := c.conn.Write(msg)
	require.NoError(c.t, err)
	reply, err := c.r.ReadString('\n')
	require.NoError(c.t, err, "reply to %q", line)
	reply = strings.TrimSuffix(reply, "\r\n")
	f := strings.Fields(reply)
	n := -1
	switch {
	case len(f) == 3 && (f[0] == "RESERVED" || f[0] == "FOUND"):
		n, _ = strconv.Atoi(f[2])
	case len(f) == 2 && f[0] == "OK":
		n, _ = strconv.Atoi(f[1])
	}
	if n < 0 {
		return reply, nil
	}
	data := make([]byte, n+2)
	_, err = io.ReadFull(c.r, data)
	require.NoError(c.t, err)
	return reply, data[:n]
}

func (c *bs) must(line string, body []byte, wantPrefix string) (string, []byte) {
	c.t.Helper()
	reply, data := c.do(line, body)
	require.True(c.t, strings.HasPrefix(reply, wantPrefix), "%q: got %q, want %s", line, reply, wantPrefix)
	return reply, data
}

func (c *bs) put(pri, delay, ttr int, body []byte) uint64 {
	c.t.Helper()
	reply, _ := c.must(fmt.Sprintf("put %d %d %d %d", pri, delay, ttr, len(body)), body, "INSERTED ")
	id, err := strconv.ParseUint(strings.TrimPrefix(reply, "INSERTED "), 10, 64)
	require.NoError(c.t, err)
	return id
}

// reserveJob reserves id; reserveAny reserves whatever is next.
func (c *bs) reserveJob(id uint64) {
	c.t.Helper()
	c.must(fmt.Sprintf("reserve-job %d", id), nil, "RESERVED ")
}

func (c *bs) reserveAny() (uint64, []byte) {
	c.t.Helper()
	reply, body := c.do("reserve-with-timeout 0", nil)
	if reply == "TIMED_OUT" {
		return 0, nil
	}
	f := strings.Fields(reply)
	require.Len(c.t, f, 3, reply)
	id, _ := strconv.ParseUint(f[1], 10, 64)
	return id, body
}

// statsJob returns stats-job id as a map, or nil for NOT_FOUND.
func (c *bs) statsJob(id uint64) map[string]string {
	c.t.Helper()
	reply, body := c.do(fmt.Sprintf("stats-job %d", id), nil)
	if reply == "NOT_FOUND" {
		return nil
	}
	return yamlMap(c.t, reply, body)
}

func (c *bs) stats() map[string]string {
	c.t.Helper()
	reply, body := c.do("stats", nil)
	return yamlMap(c.t, reply, body)
}

func yamlMap(t testing.TB, reply string, body []byte) map[string]string {
	require.True(t, strings.HasPrefix(reply, "OK "), reply)
	m := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			m[k] = strings.Trim(v, `"`)
		}
	}
	return m
}

func (c *bs) peek(id uint64) ([]byte, bool) {
	c.t.Helper()
	reply, body := c.do(fmt.Sprintf("peek %d", id), nil)
	return body, reply != "NOT_FOUND"
}
