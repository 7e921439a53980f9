package binlog

import (
	"encoding/binary"
	"os"
)

// File is one binlog.N file the log knows.
type File struct {
	N        uint64
	size     int64 // bytes appended (current file) or its size on disk (older files)
	capacity int64 // bytes preallocated; for a file read at start, its size on disk
	fd       *os.File

	// A spare zero-filled in the background: ready closes when fd or err is set.
	ready chan struct{}
	err   error

	// Live counts the jobs whose latest full record is in this file: it can be removed when
	// none is left.
	Live int
	// ids lists the jobs whose full record was written here, in order; some may have moved on
	// or died since. Compaction walks it with NextID.
	ids idList
}

// NextID returns the next job, in the order written, whose full record was written to f, or
// false when the walk has been through them all. Some may have moved on or died since.
func (f *File) NextID() (uint64, bool) { return f.ids.next() }

// Num is the file's N (0 for nil: a job without a binlog).
func (f *File) Num() uint64 {
	if f == nil {
		return 0
	}
	return f.N
}

// createFile makes file n, preallocated to capacity bytes, with the version header written.
// Mode 0400 as beanstalkd's: nothing but the server writes it, through the descriptor it keeps.
func createFile(dir string, n uint64, capacity int64) (*File, error) {
	return makeFile(dir, n, capacity, preallocate)
}

// createZeroedFile is createFile with the space written with zeros, as beanstalkd does: slower
// to make (so it is done in the background), but an fsync after a later write flushes data
// only, where preallocated-but-unwritten space costs a journal commit per fsync.
func createZeroedFile(dir string, n uint64, capacity int64) (*File, error) {
	return makeFile(dir, n, capacity, func(f *os.File, size int64) error {
		if err := writeZeros(f, size); err != nil {
			return err
		}
		return datasync(f) // the blocks allocated now, not inside a later commit's fsync
	})
}

func makeFile(dir string, n uint64, capacity int64, reserve func(*os.File, int64) error) (*File, error) {
	fd, err := os.OpenFile(filePath(dir, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*File, error) {
		_ = fd.Close()
		_ = os.Remove(filePath(dir, n))
		return nil, err
	}
	if err := reserve(fd, capacity); err != nil {
		return fail(err)
	}
	var hdr [headerSize]byte
	binary.LittleEndian.PutUint32(hdr[:], Version7)
	if _, err := fd.WriteAt(hdr[:], 0); err != nil {
		return fail(err)
	}
	return &File{N: n, size: headerSize, capacity: capacity, fd: fd}, nil
}

func writeZeros(f *os.File, size int64) error {
	zero := make([]byte, min(size, 256<<10))
	for off := int64(0); off < size; {
		n := min(int64(len(zero)), size-off)
		if _, err := f.WriteAt(zero[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}
