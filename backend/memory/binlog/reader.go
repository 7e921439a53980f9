package binlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// FileInfo describes one file as it was read.
type FileInfo struct {
	N        uint64
	Size     int64 // bytes on disk
	Version  int
	Used     int64 // bytes up to the end of the last record read
	Full     int   // full records read
	Short    int   // short records read
	ZeroTail bool  // reading stopped at a zero id: beanstalkd's preallocated tail
	Problem  string
}

// Job is a live job at the end of a replay: its latest record merged as beanstalkd merges
// them, and File, the number of the file holding its latest full record.
type Job struct {
	Record
	File uint64
	dead bool
}

// Replay is what a directory holds.
type Replay struct {
	Files []FileInfo
	Jobs  []*Job // live jobs in the order of their first full record, as beanstalkd lists them
	MaxID uint64 // the highest id in any record: the next job id is MaxID + 1
}

// ReadOptions tune ReadDir.
type ReadOptions struct {
	// MaxJobSize refuses (skips) a full record whose body is longer; 0 accepts any size.
	MaxJobSize int
	// Log receives a warning per damaged record or skipped file and a progress line per
	// second of reading; nil discards them.
	Log *slog.Logger
}

// ReadDir reads every binlog.N file in dir, in ascending N, with beanstalkd's replay rules: the
// last record for an id wins, a short record for an unknown id is ignored, a zero id ends a
// file, state Invalid deletes. A damaged record is reported with its file and offset; what
// was read before it is kept.
func ReadDir(dir string, opts ReadOptions) (*Replay, error) {
	ns, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &replayer{opts: opts, log: log, byID: make(map[uint64]*Job), names: make(map[string]string)}
	start, lastProgress := time.Now(), time.Now()
	for i, n := range ns {
		if i > 0 && n != ns[i-1]+1 {
			log.Warn("binlog: missing file(s) between", "after", FileName(ns[i-1]), "before", FileName(n))
		}
		fi := r.readFile(dir, n)
		r.out.Files = append(r.out.Files, fi)
		if fi.Problem != "" {
			log.Warn("binlog: damaged file: kept what came before the damage", "file", FileName(n), "offset", fi.Used, "problem", fi.Problem)
		}
		if time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			log.Info("binlog: replaying", "file", FileName(n), "files_read", i+1, "files", len(ns), "jobs", len(r.byID), "elapsed", time.Since(start).Round(time.Millisecond))
		}
	}
	live := r.order[:0]
	for _, j := range r.order {
		if !j.dead {
			live = append(live, j)
		}
	}
	r.out.Jobs = live
	return &r.out, nil
}

type replayer struct {
	opts  ReadOptions
	log   *slog.Logger
	out   Replay
	byID  map[uint64]*Job
	order []*Job
	names map[string]string // interned tube names
}

// errStop ends a file's reading without a problem (a zero tail or a clean end).
var errStop = errors.New("stop")

func (r *replayer) readFile(dir string, n uint64) (fi FileInfo) {
	fi.N = n
	f, err := os.Open(filePath(dir, n))
	if err != nil {
		fi.Problem = err.Error()
		return fi
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		fi.Size = st.Size()
	}
	br := bufio.NewReaderSize(f, 1<<20)
	var hdr [headerSize]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		if fi.Size > 0 {
			fi.Problem = "no complete version header"
		}
		return fi
	}
	fi.Version = int(int32(binary.LittleEndian.Uint32(hdr[:])))
	fi.Used = headerSize
	switch fi.Version {
	case Version7, Version5:
	case 0:
		// A file whose creation a crash interrupted (beanstalkd says "unknown version: 0").
		fi.ZeroTail = true
		return fi
	default:
		fi.Problem = fmt.Sprintf("unknown version %d: file skipped", fi.Version)
		return fi
	}
	rd := recordReader{br: br, v5: fi.Version == Version5, names: r.names}
	for {
		var rec Record
		size, err := rd.next(&rec)
		if err == errStop {
			fi.ZeroTail = rec.ID == 0 && size > 0
			return fi
		}
		if err != nil {
			fi.Problem = err.Error()
			return fi
		}
		if msg := r.apply(&rec, n); msg != "" {
			r.log.Warn("binlog: record skipped", "file", FileName(n), "offset", fi.Used, "job", rec.ID, "problem", msg)
		}
		fi.Used += size
		if rec.Tube != "" {
			fi.Full++
		} else {
			fi.Short++
		}
		r.out.MaxID = max(r.out.MaxID, rec.ID)
	}
}

// apply merges one record into the replay; a non-empty result says why it was skipped.
func (r *replayer) apply(rec *Record, n uint64) string {
	j := r.byID[rec.ID]
	full := rec.Tube != ""
	if j == nil && !full {
		return "" // the job's full record was in a file already removed: it is gone
	}
	switch rec.State {
	case Invalid:
		if j != nil {
			j.dead = true
			delete(r.byID, rec.ID)
		}
		return ""
	case Ready, Reserved, Buried, Delayed:
	default:
		return fmt.Sprintf("unknown state %d", rec.State)
	}
	if full && r.opts.MaxJobSize > 0 && len(rec.Body) > r.opts.MaxJobSize {
		return fmt.Sprintf("body of %d bytes is over the job size limit (-z %d)", len(rec.Body), r.opts.MaxJobSize)
	}
	if j == nil {
		j = &Job{}
		r.byID[rec.ID] = j
		r.order = append(r.order, j)
	}
	if full {
		j.Record = *rec
		j.File = n
		return ""
	}
	// A short record carries the whole Jobrec; the tube and body stay the full record's.
	tube, body, size := j.Tube, j.Body, j.BodySize
	j.Record = *rec
	j.Tube, j.Body, j.BodySize = tube, body, size
	return ""
}

// recordReader decodes records from one file.
type recordReader struct {
	br    *bufio.Reader
	v5    bool
	names map[string]string
	buf   [jobrecSize]byte
	name  [maxTubeName]byte
}

// next reads one record into rec and returns its size. errStop marks the end of the records: a
// zero id (rec.ID == 0, size > 0) or the end of the file; a torn or malformed record is an
// error naming what was wrong.
func (d *recordReader) next(rec *Record) (int64, error) {
	var namelen int64
	var size int64
	if d.v5 {
		if _, err := io.ReadFull(d.br, d.buf[:8]); err != nil {
			return 0, tornOrEnd(err, "name length")
		}
		namelen = int64(binary.LittleEndian.Uint64(d.buf[:8]))
		size = 8
	} else {
		if _, err := io.ReadFull(d.br, d.buf[:4]); err != nil {
			return 0, tornOrEnd(err, "name length")
		}
		namelen = int64(int32(binary.LittleEndian.Uint32(d.buf[:4])))
		size = 4
	}
	if namelen < 0 || namelen > maxTubeName {
		return 0, fmt.Errorf("bad tube name length %d", namelen)
	}
	if namelen > 0 {
		if _, err := io.ReadFull(d.br, d.name[:namelen]); err != nil {
			return 0, torn(err, "tube name")
		}
		size += namelen
	}
	recSize := jobrecSize
	if d.v5 {
		recSize = jobrec5Size
	}
	if _, err := io.ReadFull(d.br, d.buf[:recSize]); err != nil {
		return 0, torn(err, "job record")
	}
	size += int64(recSize)
	decodeJobrec(d.buf[:], rec, d.v5)
	if rec.ID == 0 {
		return size, errStop
	}
	if namelen == 0 {
		return size, nil
	}
	name := d.name[:namelen]
	tube, ok := d.names[string(name)]
	if !ok {
		tube = string(name)
		d.names[tube] = tube
	}
	rec.Tube = tube
	if rec.BodySize < crlf || rec.BodySize > bodySizeSane {
		return 0, fmt.Errorf("job %d: bad body size %d", rec.ID, rec.BodySize)
	}
	body := make([]byte, rec.BodySize)
	if _, err := io.ReadFull(d.br, body); err != nil {
		return 0, torn(err, "job body")
	}
	size += int64(rec.BodySize)
	rec.Body = body[: len(body)-crlf : len(body)-crlf]
	return size, nil
}

func tornOrEnd(err error, what string) error {
	if err == io.EOF {
		return errStop
	}
	return torn(err, what)
}

func torn(err error, what string) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return fmt.Errorf("torn record: the file ends inside the %s", what)
	}
	return fmt.Errorf("reading the %s: %w", what, err)
}
