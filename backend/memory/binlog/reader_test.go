package binlog

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// v7 builds a version-7 file from records: full when Tube is set, short otherwise.
func v7(recs ...Record) []byte {
	b := binary.LittleEndian.AppendUint32(nil, Version7)
	for i := range recs {
		if recs[i].Tube != "" {
			b = AppendFull(b, &recs[i])
		} else {
			b = AppendShort(b, &recs[i], 1)
		}
	}
	return b
}

// v5 builds a version-5 file by hand from the format's facts: an 8-byte namelen, the job
// struct's first 77 bytes, times in microseconds.
func v5(recs ...Record) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, Version5)
	for _, r := range recs {
		b = le.AppendUint64(b, uint64(len(r.Tube)))
		b = append(b, r.Tube...)
		var j [jobrecSize]byte
		le.PutUint64(j[0:], r.ID)
		le.PutUint32(j[8:], r.Priority)
		le.PutUint64(j[16:], uint64(r.Delay/1000))
		le.PutUint64(j[24:], uint64(r.TTR/1000))
		le.PutUint32(j[32:], uint32(len(r.Body)+2))
		le.PutUint64(j[40:], uint64(r.CreatedAt/1000))
		le.PutUint64(j[48:], uint64(r.DeadlineAt/1000))
		le.PutUint32(j[56:], r.Reserves)
		le.PutUint32(j[60:], r.Timeouts)
		le.PutUint32(j[64:], r.Releases)
		le.PutUint32(j[68:], r.Buries)
		le.PutUint32(j[72:], r.Kicks)
		j[76] = byte(r.State)
		b = append(b, j[:jobrec5Size]...)
		if r.Tube != "" {
			b = append(append(b, r.Body...), '\r', '\n')
		}
	}
	return b
}

func writeFiles(t *testing.T, files map[uint64][]byte) string {
	dir := t.TempDir()
	for n, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, FileName(n)), data, 0o600))
	}
	return dir
}

func readDir(t *testing.T, dir string, maxJobSize int) (*Replay, string) {
	var logs bytes.Buffer
	rp, err := ReadDir(dir, ReadOptions{MaxJobSize: maxJobSize, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	return rp, logs.String()
}

func ids(rp *Replay) []uint64 {
	var out []uint64
	for _, j := range rp.Jobs {
		out = append(out, j.ID)
	}
	return out
}

func full(id uint64, tube, body string, st State) Record {
	return Record{ID: id, Tube: tube, Body: []byte(body), Priority: uint32(id), TTR: 60e9, CreatedAt: 1.7e18, State: st}
}

func short(id uint64, st State) Record { return Record{ID: id, State: st, Priority: 99} }

func TestReadDirAppliesBeanstalkdsReplayRules(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[uint64][]byte{
		1: v7(full(1, "a", "one", Ready), full(2, "a", "two", Ready), full(3, "b", "three", Ready)),
		// 2 deleted, 1 buried by a short record, 9 unknown (its full record was in a removed file)
		2: v7(short(2, Invalid), short(1, Buried), short(9, Ready), full(4, "b", "\r\nfour\r\n", Reserved)),
		3: append(v7(full(5, "c", "", Delayed)), make([]byte, 300)...), // preallocated zero tail
	})
	rp, logs := readDir(t, dir, 0)
	require.Empty(t, logs)
	require.Equal(t, []uint64{1, 3, 4, 5}, ids(rp))
	require.Equal(t, uint64(9), rp.MaxID)
	j1 := rp.Jobs[0]
	require.Equal(t, Buried, j1.State)
	require.Equal(t, uint32(99), j1.Priority, "the short record's Jobrec wins")
	require.Equal(t, "a", j1.Tube)
	require.Equal(t, []byte("one"), j1.Body)
	require.Equal(t, uint64(1), j1.File, "the file of its latest full record")
	require.Equal(t, []byte("\r\nfour\r\n"), rp.Jobs[2].Body)
	require.Equal(t, Reserved, rp.Jobs[2].State, "the caller makes it ready")
	require.Equal(t, []byte{}, rp.Jobs[3].Body)
	require.True(t, rp.Files[2].ZeroTail)
}

func TestReadDirReadsVersion5(t *testing.T) {
	t.Parallel()
	r := Record{ID: 7, Tube: "old", Body: []byte("from 1.4"), Priority: 3, Delay: 5e9, TTR: 120e9,
		CreatedAt: 1_300_000_000_000_000_000, DeadlineAt: 1_300_000_005_000_000_000, Reserves: 2, Releases: 1, State: Delayed}
	dir := writeFiles(t, map[uint64][]byte{1: v5(r, Record{ID: 8, Tube: "old", Body: []byte("x"), State: Ready}, Record{ID: 8, State: Invalid})})
	rp, logs := readDir(t, dir, 0)
	require.Empty(t, logs)
	require.Len(t, rp.Jobs, 1)
	got := rp.Jobs[0].Record
	r.BodySize = int32(len(r.Body) + 2)
	require.Equal(t, r, got)
}

// A damaged record costs only what it must: what came before it in its file is kept, the
// next files are read, and the log names the file, the offset and the problem.
func TestReadDirKeepsWhatPrecedesDamage(t *testing.T) {
	t.Parallel()
	torn := v7(full(1, "a", "one", Ready), full(2, "a", "two", Ready))
	torn = torn[:len(torn)-3] // the last record's body cut short
	badName := append(v7(full(3, "a", "three", Ready)), 0xff, 0xff, 0xff, 0x7f)
	dir := writeFiles(t, map[uint64][]byte{
		1: torn,
		2: badName,
		3: {0, 0, 0, 0, 0, 0}, // a file whose creation a crash interrupted
		4: binary.LittleEndian.AppendUint32(nil, 6),
		6: v7(full(4, "a", "four", Ready)),
	})
	rp, logs := readDir(t, dir, 0)
	require.Equal(t, []uint64{1, 3, 4}, ids(rp))
	require.Contains(t, logs, "file=binlog.1 offset=94 problem=\"torn record: the file ends inside the job body\"")
	require.Contains(t, logs, "file=binlog.2 offset=96 problem=\"bad tube name length 2147483647\"")
	require.Contains(t, logs, "unknown version 6")
	require.Contains(t, logs, "missing file(s) between")
	require.NotContains(t, logs, "binlog.3")
}

// beanstalkd's -z check counts the "\r\n" (its off-by-two): a body of exactly -z bytes is
// kept here, one byte more is skipped — alone, the rest of the file is read.
func TestReadDirJobSizeLimitIsTheBodys(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[uint64][]byte{1: v7(
		full(1, "a", strings.Repeat("x", 10), Ready),
		full(2, "a", strings.Repeat("x", 11), Ready),
		full(3, "a", "after", Ready),
	)})
	rp, logs := readDir(t, dir, 10)
	require.Equal(t, []uint64{1, 3}, ids(rp))
	require.Contains(t, logs, "over the job size limit")
}

func TestRecordLayoutIsBeanstalkds(t *testing.T) {
	t.Parallel()
	r := Record{ID: 0x0102030405060708, Tube: "tb", Priority: 9, Delay: 1, TTR: 2, CreatedAt: 3, DeadlineAt: 4,
		Reserves: 5, Timeouts: 6, Releases: 7, Buries: 8, Kicks: 10, State: Buried, Body: []byte("hi")}
	b := AppendFull(nil, &r)
	require.Len(t, b, int(FullSize(2, 2)))
	require.Equal(t, []byte{2, 0, 0, 0, 't', 'b', 8, 7, 6, 5, 4, 3, 2, 1, 9, 0, 0, 0, 0, 0, 0, 0}, b[:22])
	require.Equal(t, []byte{4, 0, 0, 0, 0, 0, 0, 0}, b[6+32:6+40], "body_size counts the CRLF, then padding")
	require.Equal(t, []byte{byte(Buried), 0, 0, 0}, b[6+76:6+80])
	require.Equal(t, "hi\r\n", string(b[6+80:]))
	require.Len(t, AppendShort(nil, &r, 2), ShortSize)
}
