package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// runningServer is a run() in progress with an injected signal channel.
type runningServer struct {
	addr    net.Addr
	opsAddr net.Addr // with --http
	signals chan os.Signal
	exit    chan int
	stderr  *gatewaytest.SyncBuffer
	cancel  context.CancelFunc
	addrs   chan net.Addr // the beanstalk listener's address, once serving
	ops     chan net.Addr // the ops listener's, once bound (with --http)
}

func startServer(t *testing.T, args ...string) *runningServer {
	t.Helper()
	s := launchServer(t, args...)
	select {
	case s.addr = <-s.addrs:
	case code := <-s.exit:
		t.Fatalf("run exited %d before listening; stderr:\n%s", code, s.stderr)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start listening")
	}
	return s
}

// launchServer starts run without waiting for it to serve: s.addrs and s.ops deliver the
// addresses as they are bound.
func launchServer(t *testing.T, args ...string) *runningServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningServer{signals: make(chan os.Signal, 1), exit: make(chan int, 1), stderr: &gatewaytest.SyncBuffer{}, cancel: cancel,
		addrs: make(chan net.Addr, 1), ops: make(chan net.Addr, 1)}
	p := process{
		stdout:    io.Discard,
		stderr:    s.stderr,
		signals:   s.signals,
		listening: func(a net.Addr) { s.addrs <- a },
		// Called before listening, on the same goroutine: read after addrs (or ops) delivers.
		opsListening: func(a net.Addr) { s.opsAddr = a; s.ops <- a },
		commands:     subcommands(),
	}
	go func() { s.exit <- p.run(ctx, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.exit:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop after its context ended")
		}
	})
	return s
}

// waitExit returns run's exit status, failing if it takes longer than within.
func (s *runningServer) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case code := <-s.exit:
		s.exit <- code // for the cleanup
		return code
	case <-time.After(within):
		t.Fatalf("run did not return within %s; stderr:\n%s", within, s.stderr)
		return -1
	}
}

type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr net.Addr) *client {
	t.Helper()
	c, err := net.DialTimeout(addr.Network(), addr.String(), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return &client{Conn: c, r: bufio.NewReader(c)}
}

// roundTrip sends raw bytes and returns the first reply line.
func (c *client) roundTrip(t *testing.T, send string) string {
	t.Helper()
	_, err := io.WriteString(c, send)
	require.NoError(t, err)
	line, err := c.r.ReadString('\n')
	require.NoError(t, err)
	return line
}

func TestServesTheProtocolOnAFreePort(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-l", "127.0.0.1", "-p", "0", "-c", "-n")
	require.Equal(t, "USING default\r\n", dial(t, s.addr).roundTrip(t, "list-tube-used\r\n"))
	require.Contains(t, s.stderr.String(), "listening")
	require.Contains(t, s.stderr.String(), s.addr.String())
	require.Contains(t, s.stderr.String(), "-c flag was removed; ignored")
	require.Contains(t, s.stderr.String(), "-n flag was removed; ignored")
}

// The listening line names the address as -l gave it, with the port bound.
func TestLogsTheListenAddressAsGiven(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ listen, want string }{
		{"0.0.0.0", "addr=0.0.0.0:"},
		{"127.0.0.1", "addr=127.0.0.1:"},
		{"localhost", "addr=localhost:"},
		{"::1", "addr=[::1]:"},
	} {
		t.Run(tt.listen, func(t *testing.T) {
			t.Parallel()
			if tt.listen == "::1" {
				if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
					t.Skip("no IPv6 loopback here")
				} else {
					_ = ln.Close()
				}
			}
			s := startServer(t, "-l", tt.listen, "-p", "0")
			port := s.addr.(*net.TCPAddr).Port
			require.Contains(t, s.stderr.String(), tt.want+strconv.Itoa(port)+" ")
		})
	}
}

func TestVerboseLogsCommands(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0", "-V")
	require.Equal(t, "USING default\r\n", dial(t, s.addr).roundTrip(t, "list-tube-used\r\n"))
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(s.stderr.String()), []byte("list-tube-used"))
	}, 5*time.Second, 10*time.Millisecond)
}

func TestSIGUSR1DrainsForGood(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0")
	c := dial(t, s.addr)
	require.Equal(t, "INSERTED 1\r\n", c.roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
	s.signals <- syscall.SIGUSR1
	require.Eventually(t, func() bool {
		return c.roundTrip(t, "put 0 0 10 1\r\nx\r\n") == "DRAINING\r\n"
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "USING default\r\n", c.roundTrip(t, "list-tube-used\r\n"), "other commands keep working")
}

func TestSIGTERMStopsGracefully(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "-p", "0", "--shutdown-timeout", "30s")
			waiting := dial(t, s.addr)
			_, err := io.WriteString(waiting, "reserve\r\n") // blocks: nothing is ready
			require.NoError(t, err)
			require.Equal(t, "USING default\r\n", dial(t, s.addr).roundTrip(t, "list-tube-used\r\n"))

			s.signals <- sig
			// A waiting reserve ends (TIMED_OUT), so the stop takes far less than the 30s allowed.
			require.Equal(t, exitOK, s.waitExit(t, 10*time.Second))
			line, err := waiting.r.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "TIMED_OUT\r\n", line)
			_, err = waiting.r.ReadString('\n')
			require.ErrorIs(t, err, io.EOF, "the connection is closed")
			require.Contains(t, s.stderr.String(), "stopped")
		})
	}
}

func TestContextEndStopsGracefully(t *testing.T) {
	t.Parallel()
	s := startServer(t, "-p", "0")
	s.cancel()
	require.Equal(t, exitOK, s.waitExit(t, 10*time.Second))
}

func TestBindFailureExits111(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = taken.Close() })
	port := taken.Addr().(*net.TCPAddr).Port

	exit, _, stderr := runArgs(t, "-l", "127.0.0.1", "-p", strconv.Itoa(port))
	require.Equal(t, exitBind, exit)
	require.Contains(t, stderr, "cannot listen")
}

func TestUnixSocketReplacesAStaleSocketFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "beangate.sock")
	stale, err := net.Listen("unix", path)
	require.NoError(t, err)
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, stale.Close()) // leaves the socket file behind, as a crash would

	s := startServer(t, "-l", "unix:"+path)
	require.Equal(t, "USING default\r\n", dial(t, s.addr).roundTrip(t, "list-tube-used\r\n"))
}

func TestUnixSocketRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notASocket := filepath.Join(dir, "data")
	require.NoError(t, os.WriteFile(notASocket, []byte("keep me"), 0o600))
	live := filepath.Join(dir, "live.sock")
	ln, err := net.Listen("unix", live)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })

	tests := []struct {
		name, path, wantErr string
	}{
		{"NotASocket", notASocket, "exists and is not a socket"},
		{"InUse", live, "another server is listening on it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exit, _, stderr := runArgs(t, "-l", "unix:"+tt.path)
			require.Equal(t, exitBind, exit)
			require.Contains(t, stderr, tt.wantErr)
			_, err := os.Lstat(tt.path)
			require.NoError(t, err, "the file is left alone")
		})
	}
	data, err := os.ReadFile(notASocket)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(data))
}
