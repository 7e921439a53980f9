package rawconn

import (
	"syscall"
	"unsafe"
)

// peekingRawConn is a socket's syscall.RawConn whose Read first peeks at the socket with a raw
// recvfrom(MSG_PEEK|MSG_DONTWAIT) and calls f only when that finds something: data, the peer's
// end of stream, or an error. On an open, empty socket it returns nil without calling f.
//
// Why: go-redis checks every pooled connection it takes (each Redis round trip) by calling Read
// with an f that peeks with syscall.Recvfrom, a bookkept system call: when the gateway had gone
// idle, each one woke the runtime's monitor thread into 20 µs polling (see the package comment).
// At 16 connections that was 0.8 of the Redis gateway's 3.5 context switches per job.
// Its f only records what the peek finds and returns true, and on an empty socket it records
// nothing, which is what not calling it leaves. That is the one use of Read on these
// connections (the reads themselves go through Conn.Read): a caller that relies on Read waiting
// for data must not use it.
type peekingRawConn struct {
	syscall.RawConn
}

func (p peekingRawConn) Read(f func(fd uintptr) bool) error {
	empty := false
	if err := p.RawConn.Control(func(fd uintptr) { empty = peekEmpty(fd) }); err != nil {
		return err
	}
	if empty {
		return nil
	}
	return p.RawConn.Read(f)
}

// peekEmpty tells whether a non-blocking socket is open with nothing to read (EAGAIN).
func peekEmpty(fd uintptr) bool {
	var b [1]byte
	for {
		_, _, errno := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		if errno != syscall.EINTR {
			return errno == syscall.EAGAIN
		}
	}
}
