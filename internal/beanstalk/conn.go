// Package beanstalk is the beanstalk protocol client of beangate's own tools (ctl, migrate and
// beangate-bench). A Conn pipelines: Send queues commands, Flush writes them at once, and the
// Read methods then take the replies in order; the one-command methods (Put, StatsJob, …) do
// all three. Bodies and stats come back as the server sent them.
//
// Third-party clients (go-beanstalk) send one command per round trip and allocate per call,
// which is too slow for migrate's pipelined stats-job scans and for a bench harness that must
// not be the bottleneck of what it measures.
package beanstalk

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Conn is one protocol connection. Not safe for concurrent use.
type Conn struct {
	nc  net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	num []byte // scratch for formatting numbers without allocating
	buf []byte // the last body read, reused by the next
}

// bufferSize fits a pipelined batch of puts, or a long stats-job scan, in one write and read.
const bufferSize = 64 << 10

// NewConn speaks the protocol over nc (a TLS connection, for example).
func NewConn(nc net.Conn) *Conn { return newConn(nc, nc) }

// newConn speaks the protocol over nc, reading its replies through r.
func newConn(nc net.Conn, r io.Reader) *Conn {
	return &Conn{nc: nc, r: bufio.NewReaderSize(r, bufferSize), w: bufio.NewWriterSize(nc, bufferSize)}
}

// Close closes the connection; anything queued and not flushed is dropped.
func (c *Conn) Close() error { return c.nc.Close() }

// Reset closes the connection with a TCP reset instead of the graceful close, so that the
// socket does not linger in TIME_WAIT: a client that opens thousands of connections over and
// over would exhaust the loopback ports otherwise.
func (c *Conn) Reset() error {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	return c.nc.Close()
}

// SetDeadline bounds the reads and writes that follow (the zero time: no bound).
func (c *Conn) SetDeadline(t time.Time) error { return c.nc.SetDeadline(t) }

// Buffered is how many bytes of replies have arrived and wait to be read: a pipelining client
// reads more replies only while there are some, without waiting for the rest.
func (c *Conn) Buffered() int { return c.r.Buffered() }

// Flush writes the queued commands.
func (c *Conn) Flush() error { return c.w.Flush() }

// Send queues one command line; the CRLF is added here.
func (c *Conn) Send(line string) {
	c.w.WriteString(line)
	c.w.WriteString("\r\n")
}

// Sendf queues one command line made by fmt.Sprintf(format, args...).
func (c *Conn) Sendf(format string, args ...any) {
	fmt.Fprintf(c.w, format, args...)
	c.w.WriteString("\r\n")
}

// SendPut queues `put <pri> <delay> <ttr> <bytes>` and the body. delay and ttr are in seconds.
func (c *Conn) SendPut(pri, delay, ttr uint32, body []byte) {
	c.w.WriteString("put ")
	c.writeUint(uint64(pri), ' ')
	c.writeUint(uint64(delay), ' ')
	c.writeUint(uint64(ttr), ' ')
	c.writeUint(uint64(len(body)), '\r')
	c.w.WriteByte('\n')
	c.w.Write(body)
	c.w.WriteString("\r\n")
}

// SendDelete queues `delete <id>`.
func (c *Conn) SendDelete(id uint64) {
	c.w.WriteString("delete ")
	c.writeUint(id, '\r')
	c.w.WriteByte('\n')
}

// writeUint writes v and sep without allocating.
func (c *Conn) writeUint(v uint64, sep byte) {
	c.num = strconv.AppendUint(c.num[:0], v, 10)
	c.num = append(c.num, sep)
	c.w.Write(c.num)
}
