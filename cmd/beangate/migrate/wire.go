package migrate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// conn is a beanstalk protocol connection that pipelines: send queues commands, flush sends
// them in one write, and the replies are then read in order.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// errNotFound is a NOT_FOUND reply; errTimedOut TIMED_OUT; errDeadlineSoon DEADLINE_SOON.
var (
	errNotFound     = errors.New("NOT_FOUND")
	errTimedOut     = errors.New("TIMED_OUT")
	errDeadlineSoon = errors.New("DEADLINE_SOON")
)

func dial(ctx context.Context, addr string) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 1<<16), w: bufio.NewWriterSize(nc, 1<<16)}, nil
}

func (c *conn) Close() error { return c.nc.Close() }

// send queues one command line.
func (c *conn) send(format string, args ...any) {
	fmt.Fprintf(c.w, format, args...)
	c.w.WriteString("\r\n")
}

// sendBody queues a command followed by a body.
func (c *conn) sendBody(line string, body []byte) {
	c.w.WriteString(line)
	c.w.WriteString("\r\n")
	c.w.Write(body)
	c.w.WriteString("\r\n")
}

func (c *conn) flush() error { return c.w.Flush() }

// deadline bounds the next reads and writes (zero: none).
func (c *conn) deadline(t time.Time) { _ = c.nc.SetDeadline(t) }

func (c *conn) line() (string, error) {
	s, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(s, "\r\n"), nil
}

// reply reads one reply line and, for the replies that carry one, its body. It turns NOT_FOUND,
// TIMED_OUT and DEADLINE_SOON into their errors and any other unexpected word into an error.
func (c *conn) reply(want string) (fields []string, body []byte, err error) {
	l, err := c.line()
	if err != nil {
		return nil, nil, err
	}
	fields = strings.Fields(l)
	if len(fields) == 0 {
		return nil, nil, fmt.Errorf("empty reply")
	}
	switch fields[0] {
	case "NOT_FOUND":
		return nil, nil, errNotFound
	case "TIMED_OUT":
		return nil, nil, errTimedOut
	case "DEADLINE_SOON":
		return nil, nil, errDeadlineSoon
	case want:
	default:
		return nil, nil, fmt.Errorf("unexpected reply %q", l)
	}
	var n int
	switch want {
	case "RESERVED", "FOUND":
		if len(fields) != 3 {
			return nil, nil, fmt.Errorf("bad reply %q", l)
		}
		n, err = strconv.Atoi(fields[2])
	case "OK":
		if len(fields) != 2 {
			return nil, nil, fmt.Errorf("bad reply %q", l)
		}
		n, err = strconv.Atoi(fields[1])
	default:
		return fields, nil, nil
	}
	if err != nil || n < 0 {
		return nil, nil, fmt.Errorf("bad reply %q", l)
	}
	body = make([]byte, n+2)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, nil, err
	}
	return fields, body[:n], nil
}

// job reads a RESERVED or FOUND reply: id and body.
func (c *conn) job(want string) (uint64, []byte, error) {
	f, body, err := c.reply(want)
	if err != nil {
		return 0, nil, err
	}
	id, err := strconv.ParseUint(f[1], 10, 64)
	return id, body, err
}

// call sends one command and reads its reply.
func (c *conn) call(want, format string, args ...any) ([]string, []byte, error) {
	c.send(format, args...)
	if err := c.flush(); err != nil {
		return nil, nil, err
	}
	return c.reply(want)
}

// yamlMap parses the flat YAML of stats-job and stats-tube (1.12 names unquoted, 1.13 quoted).
func yamlMap(b []byte) map[string]string {
	m := map[string]string{}
	for _, l := range bytes.Split(b, []byte("\n")) {
		k, v, ok := strings.Cut(string(l), ": ")
		if !ok {
			continue
		}
		m[k] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return m
}

// yamlList parses list-tubes' YAML list (names quoted or not).
func yamlList(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		s, ok := strings.CutPrefix(string(l), "- ")
		if !ok {
			continue
		}
		out = append(out, strings.Trim(strings.TrimSpace(s), `"`))
	}
	return out
}

func num(m map[string]string, k string) uint64 {
	n, _ := strconv.ParseUint(m[k], 10, 64)
	return n
}

// job2 reads a job from call's result.
func (c *conn) job2(f []string, body []byte, err error) (uint64, []byte, error) {
	if err != nil {
		return 0, nil, err
	}
	id, err := strconv.ParseUint(f[1], 10, 64)
	return id, body, err
}
