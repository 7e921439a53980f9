package beanstalk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The protocol's error replies, each an error of its own so that callers can tell them with
// errors.Is. A reply that is the expected word of the command it answers is never one of them
// (BURIED answers bury; it is an error only for put and release).
var (
	ErrNotFound       = errors.New("not found")
	ErrTimedOut       = errors.New("timed out")
	ErrDeadlineSoon   = errors.New("deadline soon")
	ErrBuried         = errors.New("buried")
	ErrBadFormat      = errors.New("bad command format")
	ErrUnknownCommand = errors.New("unknown command")
	ErrJobTooBig      = errors.New("job too big")
	ErrDraining       = errors.New("draining")
	ErrInternal       = errors.New("internal error")
	ErrOutOfMemory    = errors.New("server is out of memory")
	ErrExpectedCRLF   = errors.New("expected CR LF")
	ErrNotIgnored     = errors.New("not ignored")
)

var errorReplies = map[string]error{
	"NOT_FOUND":       ErrNotFound,
	"TIMED_OUT":       ErrTimedOut,
	"DEADLINE_SOON":   ErrDeadlineSoon,
	"BURIED":          ErrBuried,
	"BAD_FORMAT":      ErrBadFormat,
	"UNKNOWN_COMMAND": ErrUnknownCommand,
	"JOB_TOO_BIG":     ErrJobTooBig,
	"DRAINING":        ErrDraining,
	"INTERNAL_ERROR":  ErrInternal,
	"OUT_OF_MEMORY":   ErrOutOfMemory,
	"EXPECTED_CRLF":   ErrExpectedCRLF,
	"NOT_IGNORED":     ErrNotIgnored,
}

// ReplyError is a reply that is neither the one expected nor one of the protocol's errors, or
// one that is malformed: the server does not speak the protocol as this client reads it.
type ReplyError struct {
	Reply string // the reply line, without its CRLF
	Want  string // the word the command succeeds with
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("unexpected reply %q (want %s)", e.Reply, e.Want)
}

// Expect reads a reply whose first word is want ("DELETED", "USING", "WATCHING", …) and
// ignores what follows it.
func (c *Conn) Expect(want string) error {
	_, err := c.readReply(want)
	return err
}

// ReadUint reads a reply of want and one number: `INSERTED <id>`, `KICKED <count>`, …
func (c *Conn) ReadUint(want string) (uint64, error) {
	rest, err := c.readReply(want)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(rest), 10, 64)
	if err != nil {
		return 0, &ReplyError{Reply: want + " " + string(rest), Want: want}
	}
	return n, nil
}

// ReadJob reads `RESERVED <id> <bytes>` or `FOUND <id> <bytes>` (want) and the body. The body
// is valid until the next read: clone it to keep it.
func (c *Conn) ReadJob(want string) (uint64, []byte, error) {
	rest, err := c.readReply(want)
	if err != nil {
		return 0, nil, err
	}
	idText, sizeText, ok := bytes.Cut(rest, []byte{' '})
	id, err1 := strconv.ParseUint(string(idText), 10, 64)
	size, err2 := strconv.ParseUint(string(sizeText), 10, 31)
	if !ok || err1 != nil || err2 != nil {
		return 0, nil, &ReplyError{Reply: want + " " + string(rest), Want: want}
	}
	body, err := c.readBody(int(size))
	return id, body, err
}

// ReadData reads `OK <bytes>` and the data (the YAML of the stats and list commands). The data
// is valid until the next read.
func (c *Conn) ReadData() ([]byte, error) {
	rest, err := c.readReply("OK")
	if err != nil {
		return nil, err
	}
	size, err := strconv.ParseUint(string(rest), 10, 31)
	if err != nil {
		return nil, &ReplyError{Reply: "OK " + string(rest), Want: "OK"}
	}
	return c.readBody(int(size))
}

// readReply reads one reply line whose first word is want and returns what follows the word
// and its space; the slice is valid until the next read. Another word is its error.
func (c *Conn) readReply(want string) ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, &ReplyError{Reply: string(line), Want: want}
	}
	line = line[:len(line)-2]
	word, rest, _ := bytes.Cut(line, []byte{' '})
	if string(word) == want {
		return rest, nil
	}
	if e, ok := errorReplies[string(line)]; ok {
		return nil, e
	}
	return nil, &ReplyError{Reply: string(line), Want: want}
}

// readBody reads size bytes and the CRLF after them into the reused buffer.
func (c *Conn) readBody(size int) ([]byte, error) {
	if cap(c.buf) < size+2 {
		c.buf = make([]byte, size+2)
	}
	data := c.buf[:size+2]
	if _, err := io.ReadFull(c.r, data); err != nil {
		return nil, err
	}
	if data[size] != '\r' || data[size+1] != '\n' {
		return nil, fmt.Errorf("a body of %d bytes not followed by CRLF", size)
	}
	return data[:size], nil
}
