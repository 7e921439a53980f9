package rawconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pair returns a wrapped client connection and the server's end of it, over real TCP.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s := <-accepted
	require.NotNil(t, s)
	w := Wrap(c)
	require.IsType(t, &Conn{}, w)
	t.Cleanup(func() { w.Close(); s.Close() })
	return w, s
}

func TestReadWrite(t *testing.T) {
	tests := []struct {
		name string
		size int
	}{
		{"one byte", 1},
		{"a command", 120},
		{"more than the socket buffers hold", 8 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := pair(t)
			out := bytes.Repeat([]byte("0123456789abcdef"), tt.size/16+1)[:tt.size]
			// The peer echoes what it reads: a big write fills the socket and waits for room.
			go func() { _, _ = io.Copy(s, s) }()
			var wg sync.WaitGroup
			wg.Add(1)
			var werr error
			go func() {
				defer wg.Done()
				n, err := c.Write(out)
				if err == nil && n != len(out) {
					err = io.ErrShortWrite
				}
				werr = err
			}()
			in := make([]byte, len(out))
			_, err := io.ReadFull(c, in)
			require.NoError(t, err)
			wg.Wait()
			require.NoError(t, werr)
			require.Equal(t, out, in)
		})
	}
}

func TestReadDeadlineIsATimeout(t *testing.T) {
	c, _ := pair(t)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	start := time.Now()
	_, err := c.Read(make([]byte, 10))
	require.Error(t, err)
	require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "got %v", err)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout())
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestPeerCloseIsEOF(t *testing.T) {
	c, s := pair(t)
	_, err := s.Write([]byte("last"))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	got, err := io.ReadAll(c)
	require.NoError(t, err) // ReadAll ends at io.EOF
	require.Equal(t, "last", string(got))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
}

func TestWriteToAResetPeerFails(t *testing.T) {
	c, s := pair(t)
	require.NoError(t, s.(*net.TCPConn).SetLinger(0)) // close with a RST
	require.NoError(t, s.Close())
	var err error
	for i := 0; i < 100 && err == nil; i++ { // the first write may land before the RST
		_, err = c.Write([]byte("x"))
		time.Sleep(time.Millisecond)
	}
	require.Error(t, err)
}

func TestCloseEndsABlockedRead(t *testing.T) {
	c, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, c.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(2 * time.Second):
		t.Fatal("Read did not return after Close")
	}
}

// The liveness check go-redis makes on a pooled connection: f (a peek, as go-redis's) is called
// only when it has something to find, and then finds it.
func TestHealthCheckCallsFOnlyWhenThereIsSomethingToSee(t *testing.T) {
	tests := []struct {
		name     string
		server   func(s net.Conn)
		called   bool
		peekSize int // what f's own peek returns when called
	}{
		{"open and empty", func(net.Conn) {}, false, 0},
		{"data waiting", func(s net.Conn) { _, _ = s.Write([]byte("+PONG\r\n")) }, true, 1},
		{"closed by the server", func(s net.Conn) { s.Close() }, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := pair(t)
			tt.server(s)
			sc, ok := c.(syscall.Conn)
			require.True(t, ok, "go-redis checks pooled connections through syscall.Conn")
			rc, err := sc.SyscallConn()
			require.NoError(t, err)
			// What the server did reaches the socket within a moment: ask until f is called or
			// the moment has passed.
			called, n := false, -1
			deadline := time.Now().Add(200 * time.Millisecond)
			for !called && time.Now().Before(deadline) {
				require.NoError(t, rc.Read(func(fd uintptr) bool {
					called = true
					var b [1]byte
					n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
					return true
				}))
				if !tt.called {
					time.Sleep(10 * time.Millisecond)
				}
			}
			require.Equal(t, tt.called, called)
			if tt.called {
				require.Equal(t, tt.peekSize, n)
			}
			require.NoError(t, rc.Control(func(fd uintptr) { require.NotZero(t, fd) }))
		})
	}
}

func TestWrapWithoutAFileDescriptor(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	require.Same(t, a, Wrap(a), "a connection without a socket is used as it is")
}
