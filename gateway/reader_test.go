package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend/memory"
)

// splitReader returns its input in two reads, split at i.
type splitReader struct {
	parts [][]byte
}

func (r *splitReader) Read(p []byte) (int, error) {
	for len(r.parts) > 0 && len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	return n, nil
}

func TestLineReaderSplitAtEveryByte(t *testing.T) {
	input := "use a\r\nput 0 0 1 4\r\na\r\nb\r\n" + strings.Repeat("x", 300) + "\r\nstats\n\r\n" + strings.Repeat("g", 222) + "\r\nlast\r\n"
	type item struct {
		line    string
		body    string
		tooLong bool
	}
	want := []item{{line: "use a"}, {line: "put 0 0 1 4", body: "a\r\nb"}, {tooLong: true}, {line: "stats\n"}, {line: strings.Repeat("g", 222)}, {line: "last"}}
	for i := 0; i <= len(input); i++ {
		src := &splitReader{parts: [][]byte{[]byte(input[:i]), []byte(input[i:])}}
		for _, r := range []io.Reader{src, iotest.OneByteReader(strings.NewReader(input))} {
			lr := newLineReader(r, 16)
			for _, w := range want {
				line, err := lr.ReadLine()
				if w.tooLong {
					require.ErrorIs(t, err, errLineTooLong, "split at %d", i)
					continue
				}
				require.NoError(t, err, "split at %d", i)
				require.Equal(t, w.line, string(line), "split at %d", i)
				if w.body != "" {
					body, crlf, err := lr.ReadBody(len(w.body))
					require.NoError(t, err)
					require.True(t, crlf)
					require.Equal(t, w.body, string(body))
				}
			}
			_, err := lr.ReadLine()
			require.ErrorIs(t, err, io.EOF)
		}
	}
}

func TestReadBodyReportsMissingCRLF(t *testing.T) {
	lr := newLineReader(bytes.NewReader([]byte("xy\r\n")), 16)
	body, crlf, err := lr.ReadBody(1)
	require.NoError(t, err)
	require.False(t, crlf)
	require.Equal(t, "x", string(body))
	_, err = lr.ReadLine() // the leftover "\n" starts the next line
	require.ErrorIs(t, err, io.EOF)
}

func TestLineLimitIsInclusiveOfCRLF(t *testing.T) {
	for _, tc := range []struct {
		content int
		tooLong bool
	}{{222, false}, {223, true}, {224, true}, {1000, true}} {
		lr := newLineReader(strings.NewReader(strings.Repeat("a", tc.content)+"\r\nok\r\n"), 64)
		_, err := lr.ReadLine()
		if tc.tooLong {
			require.ErrorIs(t, err, errLineTooLong, "%d bytes", tc.content)
		} else {
			require.NoError(t, err, "%d bytes", tc.content)
		}
		line, err := lr.ReadLine()
		require.NoError(t, err)
		require.Equal(t, "ok", string(line))
	}
}

// bytesAllocatedPerBody measures the heap bytes ReadBody allocates for a body of n bytes that
// arrives in one piece after its command line.
func bytesAllocatedPerBody(t *testing.T, n int) uint64 {
	const runs = 50
	input := []byte("put\r\n" + strings.Repeat("b", n) + "\r\n")
	readers := make([]*lineReader, runs)
	for i := range readers {
		readers[i] = newLineReader(&splitReader{parts: [][]byte{input[:5], input[5:]}}, 64)
		_, err := readers[i].ReadLine()
		require.NoError(t, err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, lr := range readers {
		_, _, err := lr.ReadBody(n)
		require.NoError(t, err)
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// A body is allocated at its own size, without its terminator: for 16 KiB that is the 16 KiB
// size class, not the 18 KiB one.
func TestReadBodyAllocatesTheBodyOnly(t *testing.T) {
	const n = 16 << 10
	require.LessOrEqual(t, bytesAllocatedPerBody(t, n), uint64(n+512))
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	server, err = ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { _ = server.Close() })
	return client, server
}

// A read whose deadline has already passed when it starts reports the deadline: it is not
// mistaken for input by a count left from the read before (which made ReadLine index buf[-1],
// and ReadBody spin).
func TestReadAfterAPassedDeadline(t *testing.T) {
	for _, tt := range []struct {
		name string
		read func(lr *lineReader) error
	}{
		{"ReadLine", func(lr *lineReader) error { _, err := lr.ReadLine(); return err }},
		{"ReadBody", func(lr *lineReader) error { _, _, err := lr.ReadBody(5); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client, server := tcpPair(t)
			c := NewServer(Config{Backend: memory.New(memory.Options{})}).newConn(server)
			_, err := io.WriteString(client, "put 0 0 1 5\r\n")
			require.NoError(t, err)
			line, err := c.in.ReadLine()
			require.NoError(t, err)
			require.Equal(t, "put 0 0 1 5", string(line))

			require.NoError(t, server.SetReadDeadline(time.Now()))
			done := make(chan error, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						done <- fmt.Errorf("panicked: %v", p)
					}
				}()
				done <- tt.read(c.in)
			}()
			select {
			case err = <-done:
				require.ErrorIs(t, err, os.ErrDeadlineExceeded)
			case <-time.After(5 * time.Second):
				t.Fatal("the read did not return")
			}
		})
	}
}
