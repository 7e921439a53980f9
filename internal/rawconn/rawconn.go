// Package rawconn makes socket reads and writes read(2) and write(2) on the non-blocking socket
// without the runtime's system-call bookkeeping: Wrap does it for a store's connection (Redis,
// PostgreSQL), ReadNow and WriteNow for the gateway's client sockets (gateway/sockio.go).
//
// Why: when every P has been idle, the runtime's monitor thread (sysmon) sleeps deeply, and the
// first bookkept system call wakes it; it then polls every 20 µs for a millisecond before it
// backs off again. A gateway waiting for its store goes idle between round trips, so every
// round trip woke it: on the 2-core test machines that was the largest single cost of a job in
// the gateway (measured: at one connection 288 → 156 µs of gateway CPU per job, 15 → 6 context
// switches; see docs/benchmarks.md). The calls cannot block (the sockets are non-blocking; a
// full or empty socket is waited for in the runtime's poller, deadlines included), so the
// bookkeeping buys nothing here.
package rawconn

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// Conn is a net.Conn whose Read and Write make raw system calls. A Read and a Write may run at
// once (a pub/sub connection's reader and its pings); two Reads or two Writes may not, as with
// every connection a client library hands to one user at a time.
type Conn struct {
	net.Conn
	rc syscall.RawConn
	rd ioState // the Read in progress
	wr ioState // the Write in progress
}

// ioState is one direction's call: its buffer, what it did, and the RawConn callback, made once.
type ioState struct {
	p   []byte
	n   int
	err error
	try func(fd uintptr) bool
}

// Wrap returns c with raw reads and writes, or c itself when it has no file descriptor to make
// them on (not a TCP or Unix socket).
func Wrap(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	w := &Conn{Conn: c, rc: rc}
	w.rd.try = w.tryRead
	w.wr.try = w.tryWrite
	return w
}

// SyscallConn is the socket's, for the liveness check client libraries make on an idle pooled
// connection (go-redis peeks whether the server closed it, and dials anew instead of failing the
// next command); its Read calls f only when there is something to see (see peekingRawConn).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return peekingRawConn{c.rc}, nil }

func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rd.p, c.rd.n, c.rd.err = p, 0, nil
	err := c.rc.Read(c.rd.try) // waits in the poller until tryRead is done, or the deadline
	c.rd.p = nil
	if err != nil {
		return 0, err
	}
	return c.rd.n, c.rd.err
}

func (c *Conn) tryRead(fd uintptr) bool {
	for {
		n, err := ReadNow(fd, c.rd.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false // nothing yet: wait for the socket
		case err != nil:
			c.rd.err = &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
		case n == 0:
			c.rd.err = io.EOF
		default:
			c.rd.n = n
		}
		return true
	}
}

func (c *Conn) Write(p []byte) (int, error) {
	c.wr.p, c.wr.n, c.wr.err = p, 0, nil
	err := c.rc.Write(c.wr.try) // waits in the poller for room, or the deadline
	n := c.wr.n
	c.wr.p = nil
	if err == nil {
		err = c.wr.err
	}
	return n, err
}

func (c *Conn) tryWrite(fd uintptr) bool {
	for c.wr.n < len(c.wr.p) {
		n, err := WriteNow(fd, c.wr.p[c.wr.n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false // full: wait for room
		case err != nil:
			c.wr.err = &net.OpError{Op: "write", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
			return true
		}
		c.wr.n += n
	}
	return true
}

// ReadNow and WriteNow are read(2) and write(2) on a non-blocking socket's descriptor, made
// without the runtime's system-call bookkeeping (see the package comment): the same results as
// syscall.Read and syscall.Write (-1 and the errno on failure). fd must be non-blocking.
func ReadNow(fd uintptr, p []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, p) }

func WriteNow(fd uintptr, p []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, p) }

func rawIO(trap, fd uintptr, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, errno := syscall.RawSyscall(trap, fd, uintptr(ptr), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
