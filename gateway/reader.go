package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxLineLength is the longest command line beanstalkd accepts, CRLF included: enough for
// "pause-tube <200-byte name> 4294967295\r\n".
const MaxLineLength = 224

// errLineTooLong reports a command line over MaxLineLength; the reader has already skipped to the
// end of it, so the next line parses normally.
var errLineTooLong = errors.New("gateway: command line too long")

// lineReader reads CRLF-terminated command lines and put bodies from a connection.
//
// A line ends at the first CR LF. An LF alone is an ordinary byte of the line, as in beanstalkd.
// A CR followed by anything but LF is also an ordinary byte: beanstalkd stalls the connection
// there until 224 bytes arrive (a bug we do not copy, see README); we keep reading to the CR LF.
type lineReader struct {
	r    *bufio.Reader
	line []byte // holds a line that spans buffer refills
}

func newLineReader(r io.Reader, size int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, size), line: make([]byte, 0, MaxLineLength)}
}

// ReadLine returns the next command line without its CRLF. The slice is valid until the next
// call. A line longer than MaxLineLength is consumed up to and including its CRLF and reported as
// errLineTooLong.
func (lr *lineReader) ReadLine() ([]byte, error) {
	lr.line = lr.line[:0]
	tooLong := false
	prevCR := false // the byte before the current chunk was a CR
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(chunk) > 0 {
			end := len(chunk)
			terminated := false
			if chunk[end-1] == '\n' && (end >= 2 && chunk[end-2] == '\r' || end == 1 && prevCR) {
				terminated = true
			}
			if !tooLong {
				if len(lr.line)+end > MaxLineLength {
					tooLong = true
					lr.line = lr.line[:0]
				} else {
					lr.line = append(lr.line, chunk...)
				}
			}
			prevCR = chunk[end-1] == '\r'
			if terminated {
				if tooLong {
					return nil, errLineTooLong
				}
				return lr.line[:len(lr.line)-2], nil
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// ReadBody reads a put body of n bytes plus its two terminating bytes and reports whether those
// were CR LF. The returned slice holds just the n body bytes.
func (lr *lineReader) ReadBody(n int) (body []byte, crlf bool, err error) {
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(lr.r, buf); err != nil {
		return nil, false, err
	}
	return buf[:n:n], bytes.Equal(buf[n:], crlfBytes), nil
}

// Discard skips n bytes (an oversized body).
func (lr *lineReader) Discard(n int64) error {
	_, err := io.CopyN(io.Discard, lr.r, n)
	return err
}

// Buffered reports how many received bytes are waiting to be parsed.
func (lr *lineReader) Buffered() int { return lr.r.Buffered() }

var crlfBytes = []byte("\r\n")
