package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// errTimedOut is the TIMED_OUT reply to reserve-with-timeout: not a failure, just nothing ready.
var errTimedOut = errors.New("TIMED_OUT")

// replyError is a reply the harness did not expect; it always fails the round.
type replyError struct {
	cmd   string
	reply string
}

func (e *replyError) Error() string { return fmt.Sprintf("%s: unexpected reply %q", e.cmd, e.reply) }

// conn is a minimal beanstalk client. Writes are buffered so callers can pipeline: queue several
// commands, flush once, then read the replies in order. Not safe for concurrent use.
type conn struct {
	nc  net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	num []byte // scratch for formatting numbers without allocating
	buf []byte // reusable job body buffer
}

func dial(addr string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return newConn(nc), nil
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}
}

func (c *conn) Close() error { return c.nc.Close() }

func (c *conn) Flush() error { return c.w.Flush() }

// WritePut queues `put <pri> <delay> <ttr> <len>\r\n<body>\r\n`.
func (c *conn) WritePut(pri, delay, ttr uint32, body []byte) {
	c.w.WriteString("put ")
	c.writeUint(uint64(pri), ' ')
	c.writeUint(uint64(delay), ' ')
	c.writeUint(uint64(ttr), ' ')
	c.writeUint(uint64(len(body)), '\r')
	c.w.WriteByte('\n')
	c.w.Write(body)
	c.w.WriteString("\r\n")
}

// WriteDelete queues `delete <id>\r\n`.
func (c *conn) WriteDelete(id uint64) {
	c.w.WriteString("delete ")
	c.writeUint(id, '\r')
	c.w.WriteByte('\n')
}

// WriteLine queues one command line; the CRLF is added here.
func (c *conn) WriteLine(line string) {
	c.w.WriteString(line)
	c.w.WriteString("\r\n")
}

func (c *conn) writeUint(v uint64, sep byte) {
	c.num = strconv.AppendUint(c.num[:0], v, 10)
	c.num = append(c.num, sep)
	c.w.Write(c.num)
}

// readLine returns the next reply line without its CRLF. The slice is only valid until the next
// read.
func (c *conn) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("reply line not terminated by CRLF: %q", line)
	}
	return line[:len(line)-2], nil
}

// ReadInserted reads the reply to a put; anything but INSERTED is an error.
func (c *conn) ReadInserted() (uint64, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, err
	}
	id, ok := parseWordUint(line, "INSERTED ")
	if !ok {
		return 0, &replyError{"put", string(line)}
	}
	return id, nil
}

// ReadDeleted reads the reply to a delete; anything but DELETED is an error.
func (c *conn) ReadDeleted() error {
	return c.expect("delete", "DELETED")
}

// ReadReserved reads the reply to reserve or reserve-with-timeout. TIMED_OUT gives errTimedOut.
// The body is only valid until the next read.
func (c *conn) ReadReserved() (uint64, []byte, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, nil, err
	}
	if string(line) == "TIMED_OUT" {
		return 0, nil, errTimedOut
	}
	rest, ok := bytes.CutPrefix(line, []byte("RESERVED "))
	if !ok {
		return 0, nil, &replyError{"reserve", string(line)}
	}
	idText, sizeText, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return 0, nil, &replyError{"reserve", string(line)}
	}
	id, err1 := strconv.ParseUint(string(idText), 10, 64)
	size, err2 := strconv.ParseUint(string(sizeText), 10, 32)
	if err1 != nil || err2 != nil {
		return 0, nil, &replyError{"reserve", string(line)}
	}
	body, err := c.readData(int(size))
	return id, body, err
}

// Command sends one line and expects exactly the given reply line.
func (c *conn) Command(line, want string) error {
	c.WriteLine(line)
	if err := c.Flush(); err != nil {
		return err
	}
	return c.expect(line, want)
}

// Use selects the tube puts go to.
func (c *conn) Use(tube string) error { return c.Command("use "+tube, "USING "+tube) }

// WatchOnly makes the watch list exactly the given tubes (default is ignored).
func (c *conn) WatchOnly(tubes ...string) error {
	for i, t := range tubes {
		if err := c.Command("watch "+t, "WATCHING "+strconv.Itoa(i+2)); err != nil {
			return err
		}
	}
	return c.Command("ignore default", "WATCHING "+strconv.Itoa(len(tubes)))
}

// Stats sends `stats` and returns the YAML document.
func (c *conn) Stats() ([]byte, error) {
	c.WriteLine("stats")
	if err := c.Flush(); err != nil {
		return nil, err
	}
	line, err := c.readLine()
	if err != nil {
		return nil, err
	}
	size, ok := parseWordUint(line, "OK ")
	if !ok {
		return nil, &replyError{"stats", string(line)}
	}
	return c.readData(int(size))
}

func (c *conn) expect(cmd, want string) error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	if string(line) != want {
		return &replyError{cmd, string(line)}
	}
	return nil
}

// readData reads a <size>-byte payload followed by CRLF into the reusable buffer.
func (c *conn) readData(size int) ([]byte, error) {
	if cap(c.buf) < size+2 {
		c.buf = make([]byte, size+2)
	}
	data := c.buf[:size+2]
	if _, err := io.ReadFull(c.r, data); err != nil {
		return nil, err
	}
	if data[size] != '\r' || data[size+1] != '\n' {
		return nil, fmt.Errorf("payload of %d bytes not followed by CRLF", size)
	}
	return data[:size], nil
}

// parseWordUint parses lines of the form "<prefix><decimal>".
func parseWordUint(line []byte, prefix string) (uint64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(prefix))
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(string(rest), 10, 64)
	return v, err == nil
}
