package gateway

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// MaxLineLength is the longest command line beanstalkd accepts, CRLF included: enough for
// "pause-tube <200-byte name> 4294967295\r\n".
const MaxLineLength = 224

// errLineTooLong reports a command line over MaxLineLength; the reader has already skipped to the
// end of it, so the next line parses normally.
var errLineTooLong = errors.New("gateway: command line too long")

// readBufs holds the read buffers of connections that have input waiting: an idle connection
// holds none (see lineReader).
var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// pooledSource is a byte source that can wait for input before it takes a buffer from readBufs,
// so that a connection blocked in a read holds no buffer. readPooled returns the buffer (nil on
// error) with n bytes read into it. atCommand reports that no byte of the next command has been
// read yet: a connection the server is stopping ends there once nothing more has arrived.
type pooledSource interface {
	readPooled(atCommand bool) (bufp *[]byte, n int, err error)
}

// lineReader reads CRLF-terminated command lines and put bodies from a connection.
//
// A line ends at the first CR LF. An LF alone is an ordinary byte of the line, as in beanstalkd.
// A CR followed by anything but LF is also an ordinary byte: beanstalkd stalls the connection
// there until 224 bytes arrive (a bug we do not copy, see docs/compatibility.md); we keep reading to the CR LF.
//
// Its buffer is only held while it has unparsed bytes: once drained it goes back to readBufs
// (when size is readBufferSize), so 10,000 idle connections do not pin 10,000 buffers.
type lineReader struct {
	src    io.Reader
	pooled pooledSource // src, if it can wait before taking a buffer; nil otherwise
	size   int
	bufp   *[]byte // from readBufs when size == readBufferSize; nil while drained
	buf    []byte  // the buffer in use; nil while drained
	r, w   int     // buf[r:w] is unparsed
	line   []byte  // holds the current line (valid until the next ReadLine)
}

func newLineReader(r io.Reader, size int) *lineReader {
	lr := &lineReader{src: r, size: size}
	if size == readBufferSize {
		lr.pooled, _ = r.(pooledSource)
	}
	return lr
}

// release hands a drained buffer back.
func (lr *lineReader) release() {
	if lr.buf == nil {
		return
	}
	if lr.bufp != nil {
		readBufs.Put(lr.bufp)
		lr.bufp = nil
	}
	lr.buf, lr.r, lr.w = nil, 0, 0
}

// fill reads more input after buf[r:w]. With nothing buffered it gives the buffer back first and
// takes one again only once input has arrived. atCommand: see pooledSource.
func (lr *lineReader) fill(atCommand bool) error {
	if lr.r == lr.w {
		lr.release()
		if lr.pooled != nil {
			bufp, n, err := lr.pooled.readPooled(atCommand)
			if bufp != nil {
				if n > 0 {
					lr.bufp, lr.buf, lr.r, lr.w = bufp, *bufp, 0, n
					return nil
				}
				readBufs.Put(bufp)
			}
			if err == nil {
				err = io.ErrNoProgress
			}
			return err
		}
	}
	if lr.buf == nil {
		if lr.size == readBufferSize {
			lr.bufp = readBufs.Get().(*[]byte)
			lr.buf = *lr.bufp
		} else {
			lr.buf = make([]byte, lr.size)
		}
	} else if lr.r > 0 {
		lr.w = copy(lr.buf, lr.buf[lr.r:lr.w])
		lr.r = 0
	}
	for tries := 0; tries < 100; tries++ {
		n, err := lr.src.Read(lr.buf[lr.w:])
		lr.w += n
		if n > 0 {
			return nil
		}
		if err != nil {
			if lr.r == lr.w {
				lr.release()
			}
			return err
		}
	}
	return io.ErrNoProgress
}

// ReadLine returns the next command line without its CRLF. The slice is valid until the next
// call. A line longer than MaxLineLength is consumed up to and including its CRLF and reported as
// errLineTooLong.
func (lr *lineReader) ReadLine() ([]byte, error) {
	if lr.line == nil {
		lr.line = make([]byte, 0, 64)
	}
	lr.line = lr.line[:0]
	tooLong := false
	prevCR := false // the byte before the current chunk was a CR
	for atCommand := true; ; atCommand = false {
		if lr.r == lr.w {
			if err := lr.fill(atCommand); err != nil {
				return nil, err
			}
		}
		avail := lr.buf[lr.r:lr.w]
		end := len(avail)
		if i := bytes.IndexByte(avail, '\n'); i >= 0 {
			end = i + 1
		}
		chunk := avail[:end]
		lr.r += end
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
			if lr.r == lr.w {
				lr.release() // drained: do not hold the buffer while the command runs
			}
			if tooLong {
				return nil, errLineTooLong
			}
			return lr.line[:len(lr.line)-2], nil
		}
	}
}

// ReadBody reads a put body of n bytes plus its two terminating bytes and reports whether those
// were CR LF. The body is allocated at exactly n bytes (with the terminator, a 16 KiB body
// would take the 18 KiB size class: 12 % more memory per job).
func (lr *lineReader) ReadBody(n int) (body []byte, crlf bool, err error) {
	body = make([]byte, n)
	if err := lr.readFull(body); err != nil {
		return nil, false, err
	}
	var end [2]byte
	if err := lr.readFull(end[:]); err != nil {
		return nil, false, unexpectedEOF(err)
	}
	return body, end == [2]byte{'\r', '\n'}, nil
}

// readFull fills p. Bytes already buffered are copied once; a long rest is read from the source
// straight into p, a short one through the buffer, which may also pick up what follows.
func (lr *lineReader) readFull(p []byte) error {
	got := copy(p, lr.buf[lr.r:lr.w])
	lr.r += got
	if lr.r == lr.w {
		lr.release()
	}
	if got == len(p) {
		return nil
	}
	if len(p)-got >= lr.size/2 {
		_, err := io.ReadFull(lr.src, p[got:])
		return err
	}
	for got < len(p) {
		if err := lr.fill(false); err != nil {
			return unexpectedEOF(err)
		}
		k := copy(p[got:], lr.buf[lr.r:lr.w])
		got += k
		lr.r += k
	}
	if lr.r == lr.w {
		lr.release()
	}
	return nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Discard skips n bytes (an oversized body).
func (lr *lineReader) Discard(n int64) error {
	for n > 0 {
		if lr.r == lr.w {
			if err := lr.fill(false); err != nil {
				return err
			}
		}
		k := int64(lr.w - lr.r)
		if k > n {
			k = n
		}
		lr.r += int(k)
		n -= k
	}
	if lr.r == lr.w {
		lr.release()
	}
	return nil
}

// Buffered reports how many received bytes are waiting to be parsed.
func (lr *lineReader) Buffered() int { return lr.w - lr.r }

// Peek returns the received bytes not yet parsed, without consuming them; valid until the next
// read.
func (lr *lineReader) Peek() []byte { return lr.buf[lr.r:lr.w] }

// Skip consumes n of the bytes Peek returned.
func (lr *lineReader) Skip(n int) {
	lr.r += n
	if lr.r == lr.w {
		lr.release()
	}
}
