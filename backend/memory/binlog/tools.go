package binlog

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"sort"
)

// Report describes a stopped server's directory: what `beangate binlog inspect` prints.
type Report struct {
	Files     []FileInfo
	Tubes     []TubeCount
	Jobs      int
	NextID    uint64
	Bytes     int64 // the files' bytes on disk
	LiveBytes int64 // the live jobs' full records: what a compacted directory needs
}

// TubeCount is the live jobs of one tube by the state they come back in (a job reserved when
// the server stopped comes back ready, so it is counted as ready).
type TubeCount struct {
	Name                   string
	Ready, Delayed, Buried int
}

// Inspect reads dir under its lock (ErrLocked while a server runs on it) and reports it.
func Inspect(dir string, log *slog.Logger) (*Report, error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	rp, err := ReadDir(dir, ReadOptions{Log: log})
	if err != nil {
		return nil, err
	}
	return report(rp), nil
}

func report(rp *Replay) *Report {
	r := &Report{Files: rp.Files, Jobs: len(rp.Jobs), NextID: rp.MaxID + 1}
	for _, f := range rp.Files {
		r.Bytes += f.Size
	}
	for _, j := range rp.Jobs {
		r.LiveBytes += FullSize(len(j.Tube), len(j.Body))
	}
	r.Tubes = CountByTube(rp.Jobs)
	return r
}

// CountByTube counts jobs per tube by the state they come back in, in tube name order.
func CountByTube(jobs []*Job) []TubeCount {
	byTube := map[string]*TubeCount{}
	for _, j := range jobs {
		t := byTube[j.Tube]
		if t == nil {
			t = &TubeCount{Name: j.Tube}
			byTube[j.Tube] = t
		}
		switch j.State {
		case Buried:
			t.Buried++
		case Delayed:
			t.Delayed++
		default:
			t.Ready++
		}
	}
	out := make([]TubeCount, 0, len(byTube))
	for _, t := range byTube {
		out = append(out, *t)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Compact rewrites a stopped server's directory to its live jobs: one new file numbered after
// the others holds every live job as a full record (in the order beanstalkd would list them),
// and once it is on disk the older files are removed. A crash at any point leaves a directory
// that replays to the same jobs. It returns the directory before and after.
func Compact(dir string, log *slog.Logger) (before, after *Report, err error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, err
	}
	defer lock.Close()
	rp, err := ReadDir(dir, ReadOptions{Log: log})
	if err != nil {
		return nil, nil, err
	}
	before = report(rp)
	next := uint64(1)
	if k := len(rp.Files); k > 0 {
		next = rp.Files[k-1].N + 1
	}
	buf := binary.LittleEndian.AppendUint32(make([]byte, 0, before.LiveBytes+2*ShortSize+headerSize), Version7)
	live := false
	for _, j := range rp.Jobs {
		r := j.Record
		if r.State == Reserved {
			r.State = Ready
		}
		buf = AppendFull(buf, &r)
		live = live || r.ID == rp.MaxID
	}
	if !live && rp.MaxID > 0 {
		// The highest id is gone; a record of it and its deletion keeps the next id where it was.
		tomb := Record{ID: rp.MaxID, Tube: "default", State: Ready}
		buf = AppendFull(buf, &tomb)
		tomb.State = Invalid
		buf = AppendShort(buf, &tomb, 0)
	}
	if err := writeFileSynced(dir, next, buf); err != nil {
		return nil, nil, err
	}
	for _, f := range rp.Files {
		if err := os.Remove(filePath(dir, f.N)); err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
	}
	if err := syncDirPath(dir); err != nil {
		return nil, nil, err
	}
	rp, err = ReadDir(dir, ReadOptions{Log: log})
	if err != nil {
		return nil, nil, err
	}
	return before, report(rp), nil
}

func writeFileSynced(dir string, n uint64, data []byte) error {
	f, err := os.OpenFile(filePath(dir, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", FileName(n), err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("syncing %s: %w", FileName(n), err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDirPath(dir)
}

func syncDirPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// LockedReplay is a stopped server's directory read under its lock, which it keeps until Close
// (beangate migrate reads its jobs while no server may start on it).
type LockedReplay struct {
	*Replay
	lock *os.File
}

// ReadLocked locks dir (ErrLocked while a server runs on it) and reads it.
func ReadLocked(dir string, opts ReadOptions) (*LockedReplay, error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	rp, err := ReadDir(dir, opts)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	return &LockedReplay{Replay: rp, lock: lock}, nil
}

// Close releases the lock.
func (r *LockedReplay) Close() error { return r.lock.Close() }
