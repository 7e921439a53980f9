package gateway

import (
	"strings"
	"testing"
)

// cyclicReader returns its pattern over and over, as a stream of pipelined commands.
type cyclicReader struct {
	pattern []byte
	off     int
}

func (r *cyclicReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.pattern[r.off:])
		n += c
		r.off = (r.off + c) % len(r.pattern)
	}
	return n, nil
}

// BenchmarkParseCycle frames and parses one job's commands (put with a 100-byte body,
// reserve-with-timeout, delete) as the connection loop does, without a socket or a backend.
func BenchmarkParseCycle(b *testing.B) {
	body := strings.Repeat("x", 100)
	src := &cyclicReader{pattern: []byte("put 1024 0 60 100\r\n" + body + "\r\nreserve-with-timeout 0\r\ndelete 1234567\r\n")}
	lr := newLineReader(src, readBufferSize)
	b.ReportAllocs()
	b.SetBytes(int64(len(src.pattern)))
	for b.Loop() {
		line, err := lr.ReadLine()
		if err != nil || !strings.HasPrefix(string(line[:4]), "put ") {
			b.Fatalf("put line %q: %v", line, err)
		}
		pri, rest, ok1 := readU32(line[4:])
		_, rest, ok2 := readU32(rest)
		_, rest, ok3 := readU32(rest)
		size, _, ok4 := readU32(rest)
		if !(ok1 && ok2 && ok3 && ok4) || pri != 1024 || size != 100 {
			b.Fatalf("put args of %q", line)
		}
		if _, crlf, err := lr.ReadBody(int(size)); err != nil || !crlf {
			b.Fatalf("body: crlf %v, %v", crlf, err)
		}
		if line, err = lr.ReadLine(); err != nil {
			b.Fatal(err)
		}
		if _, ok := readReserveTimeout(line[len("reserve-with-timeout"):]); !ok {
			b.Fatalf("reserve-with-timeout args of %q", line)
		}
		if line, err = lr.ReadLine(); err != nil {
			b.Fatal(err)
		}
		if id, ok := lastID(line[len("delete"):]); !ok || id != 1234567 {
			b.Fatalf("delete args of %q", line)
		}
	}
}

// BenchmarkReplies formats one job's replies (INSERTED, RESERVED with a 100-byte body, DELETED)
// into a reused output buffer, as the connection loop does.
func BenchmarkReplies(b *testing.B) {
	body := make([]byte, 100)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = appendNumberReply(out[:0], wordInserted, 1234567)
		out = appendJobReply(out, wordReserved, 1234567, body)
		out = append(out, msgDeleted...)
	}
	b.SetBytes(int64(len(out)))
}
