package gateway

import (
	"net"
	"syscall"

	"github.com/beangate/beangate/internal/rawconn"
)

// readNow and writeNow are read(2) and write(2) on a non-blocking socket, made without the
// runtime's system-call bookkeeping (internal/rawconn, which says why). When every P has been
// idle, the runtime's monitor thread sleeps, and the first bookkept system call wakes it: on a
// connection woken from an idle server that is the read of its command, so the wake-up would
// sit on the path of every reply — of a RESERVED to a waiting worker too.
func readNow(fd uintptr, p []byte) (int, error) { return rawconn.ReadNow(fd, p) }

func writeNow(fd uintptr, p []byte) (int, error) { return rawconn.WriteNow(fd, p) }

// socketWriter writes a connection's replies with writeNow, through the socket's RawConn so
// that a full socket is waited for in the runtime's poller like any net.Conn write. Without a
// RawConn (not a TCP or Unix socket) it uses the net.Conn.
type socketWriter struct {
	nc      net.Conn
	rc      syscall.RawConn
	writeFD func(fd uintptr) bool // tryWrite, made once
	buf     []byte                // what tryWrite has left to write
	wait    bool                  // tryWrite waits for the socket when it is full
	err     error
}

// write writes p, waiting for the socket if wait is set; without wait it writes what the
// socket takes now. It returns how much was written.
func (w *socketWriter) write(p []byte, wait bool) (int, error) {
	if w.rc == nil {
		return w.nc.Write(p) // always waits; not used without wait (no RawConn, no deliver)
	}
	if w.writeFD == nil {
		w.writeFD = w.tryWrite
	}
	w.buf, w.wait, w.err = p, wait, nil
	if err := w.rc.Write(w.writeFD); err != nil && w.err == nil {
		w.err = err // the socket is closed, or a deadline passed
	}
	n := len(p) - len(w.buf)
	w.buf = nil
	return n, w.err
}

func (w *socketWriter) tryWrite(fd uintptr) bool {
	for len(w.buf) > 0 {
		n, err := writeNow(fd, w.buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return !w.wait // wait for room, or leave the rest to the caller
		case err != nil:
			w.err = err
			return true
		}
		w.buf = w.buf[n:]
	}
	return true
}
