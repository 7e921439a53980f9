package gateway

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
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
