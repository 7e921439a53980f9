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

// ReadOptions tune ReadDir and Replay.
type ReadOptions struct {
	// MaxJobSize refuses (skips) a full record whose body is longer; 0 accepts any size.
	MaxJobSize int
	// Log receives a warning per damaged record or skipped file and a progress line per
	// second of reading; nil discards them.
	Log *slog.Logger
}

// Sink receives a replay's records, beanstalkd's rules already applied to them.
type Sink interface {
	// Put is a full record: job r.ID is created, or replaced whole if known. Its latest full
	// record is in file.
	Put(r *Record, file *File)
	// Update is a short record: the known job takes r's Jobrec (its tube and body stay). It
	// reports false when the job is unknown (its full record was in a file removed since), and
	// the record is then ignored.
	Update(r *Record) bool
	// Delete forgets job id if known.
	Delete(id uint64)
	// Jobs is how many jobs are known, for the progress line.
	Jobs() int
}

// ReadDir reads every binlog.N file in dir, in ascending N, with beanstalkd's replay rules (see
// Replay) into the live jobs.
func ReadDir(dir string, opts ReadOptions) (*Replay, error) {
	ns, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	files := make([]*File, len(ns))
	for i, n := range ns {
		files[i] = &File{N: n}
	}
	c := &collector{byID: make(map[uint64]*Job)}
	infos, maxID := ReplayFiles(dir, files, c, opts)
	out := &Replay{Files: infos, MaxID: maxID}
	for _, j := range c.order {
		if !j.dead {
			out.Jobs = append(out.Jobs, j)
		}
	}
	return out, nil
}

// ReplayFiles reads files (of dir, ascending) into sink with beanstalkd's replay rules: the last
// record for an id wins, a short record for an unknown id is ignored, a zero id ends a file,
// state Invalid deletes. A damaged record is reported with its file and offset, and costs only
// itself when the records around it can still be told apart, else the rest of its file; what
// came before is kept. It returns what each file held and the highest id seen.
func ReplayFiles(dir string, files []*File, sink Sink, opts ReadOptions) ([]FileInfo, uint64) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &replayer{opts: opts, log: log, sink: sink, names: make(map[string]string)}
	start, lastProgress := time.Now(), time.Now()
	infos := make([]FileInfo, 0, len(files))
	for i, f := range files {
		if i > 0 && f.N != files[i-1].N+1 {
			log.Warn("binlog: missing file(s) between", "after", FileName(files[i-1].N), "before", FileName(f.N))
		}
		fi := r.readFile(dir, f)
		infos = append(infos, fi)
		if fi.Problem != "" {
			log.Warn("binlog: damaged file: kept what came before the damage", "file", FileName(f.N), "offset", fi.Used, "problem", fi.Problem)
		}
		if time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			log.Info("binlog: replaying", "file", FileName(f.N), "files_read", i+1, "files", len(files), "jobs", sink.Jobs(), "elapsed", time.Since(start).Round(time.Millisecond))
		}
	}
	return infos, r.maxID
}

// collector is the Sink of ReadDir: the jobs as records.
type collector struct {
	byID  map[uint64]*Job
	order []*Job
}

func (c *collector) Put(r *Record, f *File) {
	j := c.byID[r.ID]
	if j == nil {
		j = &Job{}
		c.byID[r.ID] = j
		c.order = append(c.order, j)
	}
	j.Record, j.File = *r, f.N
}

func (c *collector) Update(r *Record) bool {
	j := c.byID[r.ID]
	if j == nil {
		return false
	}
	tube, body, size := j.Tube, j.Body, j.BodySize
	j.Record = *r
	j.Tube, j.Body, j.BodySize = tube, body, size
	return true
}

func (c *collector) Delete(id uint64) {
	if j := c.byID[id]; j != nil {
		j.dead = true
		delete(c.byID, id)
	}
}

func (c *collector) Jobs() int { return len(c.byID) }

type replayer struct {
	opts  ReadOptions
	log   *slog.Logger
	sink  Sink
	maxID uint64
	names map[string]string // interned tube names
}

// errStop ends a file's reading without a problem (a zero tail or a clean end).
var errStop = errors.New("stop")

func (r *replayer) readFile(dir string, file *File) (fi FileInfo) {
	n := file.N
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
	file.size, file.capacity = fi.Size, fi.Size
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
	var rec Record
	for {
		rec = Record{}
		size, err := rd.next(&rec)
		if err == errStop {
			fi.ZeroTail = rec.ID == 0 && size > 0
			return fi
		}
		if err != nil {
			fi.Problem = err.Error()
			return fi
		}
		if msg := r.apply(&rec, file); msg != "" {
			r.log.Warn("binlog: record skipped", "file", FileName(n), "offset", fi.Used, "job", rec.ID, "problem", msg)
		}
		fi.Used += size
		if rec.Tube != "" {
			fi.Full++
		} else {
			fi.Short++
		}
		r.maxID = max(r.maxID, rec.ID)
	}
}

// apply hands one record to the sink; a non-empty result says why it was skipped.
func (r *replayer) apply(rec *Record, f *File) string {
	full := rec.Tube != ""
	switch rec.State {
	case Invalid:
		r.sink.Delete(rec.ID)
		return ""
	case Ready, Reserved, Buried, Delayed:
	default:
		return fmt.Sprintf("unknown state %d", rec.State)
	}
	if !full {
		r.sink.Update(rec) // unknown: the job's full record was in a file already removed
		return ""
	}
	if r.opts.MaxJobSize > 0 && len(rec.Body) > r.opts.MaxJobSize {
		return fmt.Sprintf("body of %d bytes is over the job size limit (-z %d)", len(rec.Body), r.opts.MaxJobSize)
	}
	r.sink.Put(rec, f)
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
