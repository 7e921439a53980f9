package binlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxFileSize is beanstalkd's default -s.
const DefaultMaxFileSize = 10485760

// ErrNoSpace: disk space for a record could not be reserved. beanstalkd answers OUT_OF_MEMORY.
var ErrNoSpace = errors.New("binlog: no disk space can be reserved")

// Options configure a Log.
type Options struct {
	Dir         string
	MaxFileSize int64 // -s; 0 means DefaultMaxFileSize
	// SyncInterval is -f: fsync at most this long after a write, also when no write follows.
	// 0 fsyncs before every Commit returns (concurrent commits share one fsync).
	SyncInterval time.Duration
	NoSync       bool // -F: never fsync
	MaxJobSize   int  // replay refuses longer bodies; 0 accepts any
	Logger       *slog.Logger
}

// Log is an open binlog directory being written.
//
// Locking: the methods that place records (Reserve, WriteFull, WriteShort, Retire, …) and the
// File fields are called and read under the caller's own lock, which orders records as the
// caller's state changes. Commit is called after that lock is released: it writes what was
// placed and, per the fsync policy, syncs it, so that one write and one fsync serve every
// caller waiting at that moment (group commit).
type Log struct {
	opts Options
	dir  string
	dirf *os.File // kept open to fsync the directory after files come and go
	lock *os.File
	log  *slog.Logger

	// Under the caller's lock.
	files     []*File // oldest first; the last is the current file
	spares    []*File // preallocated, numbered after the current file, used in order
	spareRoom int64
	prep      sync.WaitGroup // spares being zero-filled
	reserved  int64          // bytes promised to future records (a delete per live job, …)
	live      int64          // bytes of the live jobs' full records
	records   uint64
	migrated  uint64

	pmu      sync.Mutex // guards the fields below: what is placed but not yet written
	pending  []chunk
	free     [][]byte // written chunks' buffers, for the next ones
	appended uint64   // sequence: bytes placed since open
	retired  []retiredFile

	gmu     sync.Mutex    // guards round
	round   chan struct{} // closed when the commit round under way ends; nil when none is
	durable atomic.Uint64 // durableLocked as the last commit round left it (a lower bound)

	smu       sync.Mutex // one background fsync round at a time; taken before fmu
	fmu       sync.Mutex // guards the fields below: the writing and syncing
	written   uint64     // sequence written to the files
	synced    uint64     // sequence on disk
	dirty     []*File    // written since their last fsync
	dirDirty  atomic.Bool
	syncArmed bool
	lastSync  time.Time
	timer     *time.Timer
	closed    bool

	writeErrors atomic.Uint64 // failed writes, and room or files that could not be made
	syncErrors  atomic.Uint64 // failed fsyncs
	syncs       atomic.Uint64 // fsync rounds, for the tests of the policies
	slowSync    time.Duration // tests: each fsync round takes at least this long
	syncing     atomic.Bool   // tests: an fsync round is under way
	holdSync    chan struct{} // tests: each fsync round waits until this is closed
	holdPrepare chan struct{} // tests: each spare's zero-fill waits until this is closed
	onSync      atomic.Pointer[func(time.Duration)]
}

type chunk struct {
	f    *File
	off  int64
	data []byte
}

type retiredFile struct {
	f   *File
	seq uint64 // removable once this sequence is on disk
}

// Open locks dir (ErrLocked if another server holds it), replays every file in it into sink
// and starts a new file numbered after the highest. It returns the highest job id seen. The
// caller then adopts the live jobs (AdoptJob) before writing.
func Open(opts Options, sink Sink) (*Log, uint64, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, 0, err
	}
	lock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, 0, err
	}
	l := &Log{opts: opts, dir: opts.Dir, lock: lock, log: opts.Logger, lastSync: time.Now()}
	fail := func(err error) (*Log, uint64, error) {
		if l.dirf != nil {
			_ = l.dirf.Close()
		}
		_ = lock.Close()
		return nil, 0, err
	}
	ns, err := listFiles(opts.Dir)
	if err != nil {
		return fail(err)
	}
	for _, n := range ns {
		l.files = append(l.files, &File{N: n})
	}
	start := time.Now()
	_, maxID := ReplayFiles(opts.Dir, l.files, sink, ReadOptions{MaxJobSize: opts.MaxJobSize, Log: opts.Logger})
	opts.Logger.Info("binlog: replayed", "dir", opts.Dir, "files", len(ns), "jobs", sink.Jobs(), "next_id", maxID+1, "elapsed", time.Since(start).Round(time.Millisecond))
	if l.dirf, err = os.Open(opts.Dir); err != nil {
		return fail(err)
	}
	next := uint64(1)
	if k := len(ns); k > 0 {
		next = ns[k-1] + 1
	}
	cur, err := createZeroedFile(l.dir, next, opts.MaxFileSize)
	if err != nil {
		return fail(fmt.Errorf("creating %s: %w", FileName(next), err))
	}
	l.files = append(l.files, cur)
	l.dirDirty.Store(true)
	l.prepareSpare()
	return l, maxID, nil
}

// nextNum is the number the next new file takes.
func (l *Log) nextNum() uint64 {
	if k := len(l.spares); k > 0 {
		return l.spares[k-1].N + 1
	}
	return l.current().N + 1
}

// prepareSpare starts zero-filling the next file in the background, one at a time, when the
// files made hold less than a file's room beyond what is promised, so that neither moving to a
// new file nor a reservation has to make one while the caller waits. Its room counts once it
// is made (see settleSpares).
func (l *Log) prepareSpare() {
	l.settleSpares()
	for _, f := range l.spares {
		if f.ready != nil {
			return
		}
	}
	if len(l.spares) > 0 && l.room() >= l.reserved+l.opts.MaxFileSize {
		return
	}
	ready := make(chan struct{})
	f := &File{N: l.nextNum(), size: headerSize, capacity: l.opts.MaxFileSize, ready: ready}
	l.spares = append(l.spares, f)
	l.prep.Add(1)
	hold := l.holdPrepare
	go func() {
		defer l.prep.Done()
		if hold != nil {
			<-hold
		}
		made, err := createZeroedFile(l.dir, f.N, f.capacity)
		if err == nil {
			f.fd = made.fd
		}
		f.err = err
		l.dirDirty.Store(true)
		close(ready)
	}()
}

// settleSpares counts the room of the spares whose zero-fill has finished and drops those that
// failed. It does not wait for one still under way (tens of milliseconds under the caller's
// lock, at every file change): promises rest only on files that exist.
func (l *Log) settleSpares() {
	kept := l.spares[:0]
	for _, f := range l.spares {
		if f.ready != nil && isClosed(f.ready) {
			if f.err != nil {
				l.writeErrors.Add(1)
				l.log.Error("binlog: cannot prepare a file", "file", FileName(f.N), "err", f.err)
				continue
			}
			f.ready = nil
			l.spareRoom += f.capacity - f.size
		}
		kept = append(kept, f)
	}
	l.spares = kept
}

// takeSpare returns the next spare with room for size bytes, waiting for its zero-fill if it
// is still under way (only when a whole file filled up meanwhile), or a new file. Spares are
// used in their numbers' order, as a reader reads them.
func (l *Log) takeSpare(size int64) (*File, error) {
	for len(l.spares) > 0 {
		f := l.spares[0]
		l.spares = l.spares[1:]
		if f.ready == nil { // settled: its room was counted
			l.spareRoom -= f.capacity - f.size
		} else {
			<-f.ready
			if f.err != nil {
				l.writeErrors.Add(1)
				l.log.Error("binlog: cannot prepare a file", "file", FileName(f.N), "err", f.err)
				continue
			}
		}
		if f.capacity-f.size >= size {
			return f, nil
		}
		l.files = append(l.files, f) // too small for this record: left empty, in its place
	}
	n := l.nextNum()
	f, err := createFile(l.dir, n, max(l.opts.MaxFileSize, headerSize+size))
	if err != nil {
		return nil, fmt.Errorf("binlog: creating %s: %w", FileName(n), err)
	}
	l.dirDirty.Store(true)
	return f, nil
}

// Dir is the directory the log writes.
func (l *Log) Dir() string { return l.dir }

// AdoptJob records that job id's latest full record, of size bytes, is in f (a replayed job).
func (l *Log) AdoptJob(f *File, id uint64, size int64) {
	f.Live++
	f.ids.add(id)
	l.live += size
}

func (l *Log) current() *File { return l.files[len(l.files)-1] }

// room is the bytes that can still be placed without creating a file.
func (l *Log) room() int64 {
	cur := l.current()
	return cur.capacity - cur.size + l.spareRoom
}

// Reserve promises n bytes to future records, preallocating files as needed; ErrNoSpace when
// the disk cannot hold them.
func (l *Log) Reserve(n int64) error {
	if cur := l.current(); cur.capacity-cur.size < l.reserved+n {
		l.settleSpares()
	}
	for l.room() < l.reserved+n {
		next := l.nextNum()
		f, err := createFile(l.dir, next, l.opts.MaxFileSize)
		if err != nil {
			l.writeErrors.Add(1)
			l.log.Error("binlog: cannot preallocate a file: the change is refused", "file", FileName(next), "err", err)
			return fmt.Errorf("%w: %v", ErrNoSpace, err)
		}
		l.dirDirty.Store(true)
		l.spares = append(l.spares, f)
		l.spareRoom += f.capacity - f.size
	}
	l.reserved += n
	l.prepareSpare()
	return nil
}

// Unreserve gives back a promise that will not be written.
func (l *Log) Unreserve(n int64) { l.reserved = max(0, l.reserved-n) }

// place finds room for size bytes in the current file, moving to the next one when they do not
// fit (a record never straddles two files).
func (l *Log) place(size int64) (*File, int64, error) {
	cur := l.current()
	if cur.size+size > cur.capacity {
		next, err := l.takeSpare(size)
		if err != nil {
			return nil, 0, err
		}
		l.files = append(l.files, next)
		cur = next
		l.prepareSpare()
	}
	off := cur.size
	cur.size += size
	l.reserved = max(0, l.reserved-size)
	l.records++
	return cur, off, nil
}

// Written chunks' buffers are kept for the next ones: a fresh 4 KiB buffer for every commit
// doubled what a put and a delete allocate, and the collector's pace with it.
const (
	maxFreeBuffers = 4
	maxFreeBuffer  = 1 << 20
)

// bufferLocked returns an empty buffer for a chunk whose first record is size bytes (pmu held).
func (l *Log) bufferLocked(size int64) []byte {
	if k := len(l.free); k > 0 {
		b := l.free[k-1]
		l.free[k-1] = nil
		l.free = l.free[:k-1]
		return b
	}
	return make([]byte, 0, max(4096, size))
}

// appendRecord places one encoded record and queues its bytes; it returns the sequence to
// Commit.
func (l *Log) appendRecord(size int64, encode func([]byte) []byte) (*File, uint64, error) {
	f, off, err := l.place(size)
	if err != nil {
		l.writeErrors.Add(1)
		return nil, 0, err
	}
	l.pmu.Lock()
	if k := len(l.pending); k > 0 && l.pending[k-1].f == f && l.pending[k-1].off+int64(len(l.pending[k-1].data)) == off {
		l.pending[k-1].data = encode(l.pending[k-1].data)
	} else {
		l.pending = append(l.pending, chunk{f: f, off: off, data: encode(l.bufferLocked(size))})
	}
	l.appended += uint64(size)
	seq := l.appended
	l.pmu.Unlock()
	return f, seq, nil
}

// WriteFull places a full record of r: the job's latest full record is now in the returned
// file, no longer in old (nil for a new job). size is FullSize of the job.
func (l *Log) WriteFull(r *Record, old *File) (*File, uint64, error) {
	size := FullSize(len(r.Tube), len(r.Body))
	f, seq, err := l.appendRecord(size, func(b []byte) []byte { return AppendFull(b, r) })
	if err != nil {
		return old, 0, err
	}
	if old != nil {
		old.Live--
	} else {
		l.live += size
	}
	f.Live++
	f.ids.add(r.ID)
	return f, seq, nil
}

// WriteShort places a short record of r (a job whose body is bodyLen bytes).
func (l *Log) WriteShort(r *Record, bodyLen int) (uint64, error) {
	_, seq, err := l.appendRecord(ShortSize, func(b []byte) []byte { return AppendShort(b, r, bodyLen) })
	return seq, err
}

// JobGone records that a job whose full record (of fullSize bytes) is in f no longer lives.
func (l *Log) JobGone(f *File, fullSize int64) {
	if f != nil {
		f.Live--
		l.live -= fullSize
	}
}

// Migrated counts a full record written by compaction.
func (l *Log) Migrated() { l.migrated++ }

// Oldest is the oldest file other than the current one, or nil.
func (l *Log) Oldest() *File {
	if len(l.files) < 2 {
		return nil
	}
	return l.files[0]
}

// Garbage reports whether the files hold at least twice as many dead bytes as live ones: the
// point where compaction pays.
func (l *Log) Garbage() bool {
	var total int64
	for _, f := range l.files[:len(l.files)-1] {
		total += f.capacity
	}
	total += l.current().size
	return total-l.live >= 2*l.live
}

// Retire drops the oldest file, which no live job needs any more. It is removed from disk once
// everything placed so far is on disk (the records that made it dead).
func (l *Log) Retire(f *File) {
	if len(l.files) < 2 || l.files[0] != f {
		return
	}
	l.files[0] = nil
	l.files = l.files[1:]
	l.pmu.Lock()
	l.retired = append(l.retired, retiredFile{f: f, seq: l.appended})
	l.pmu.Unlock()
}

// Commit returns once everything placed up to seq is written and, with SyncInterval 0 and no
// NoSync, on disk. One caller at a time leads a round (one write and one fsync for everything
// placed so far); callers arriving meanwhile wait for the round's end together and return if it
// covered them, else one of them leads the next. Waiting on the round rather than on fmu wakes
// them all at once: queued on the mutex they were woken one after another, each a context switch
// on the critical path, which was most of -f0's CPU per put.
func (l *Log) Commit(seq uint64) error {
	if seq == 0 {
		return nil
	}
	for {
		if l.durable.Load() >= seq {
			return nil
		}
		l.gmu.Lock()
		if ch := l.round; ch != nil {
			l.gmu.Unlock()
			<-ch
			continue
		}
		ch := make(chan struct{})
		l.round = ch
		l.gmu.Unlock()
		err := l.commitRound(seq)
		l.gmu.Lock()
		l.round = nil
		close(ch)
		l.gmu.Unlock()
		if err != nil {
			return err // the waiters lead a retry of their own and learn its outcome
		}
	}
}

// commitRound writes (and syncs, per the policy) everything placed, unless seq is durable already.
func (l *Log) commitRound(seq uint64) error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	defer func() { l.durable.Store(l.durableLocked()) }()
	if l.durableLocked() >= seq {
		return nil
	}
	if l.closed {
		return errors.New("binlog: closed")
	}
	return l.flushLocked()
}

func (l *Log) syncEveryWrite() bool { return l.opts.SyncInterval == 0 && !l.opts.NoSync }

// durableLocked is the sequence a Commit may count as done.
func (l *Log) durableLocked() uint64 {
	if l.syncEveryWrite() {
		return l.synced
	}
	return l.written
}

// flushLocked writes everything placed, then syncs per the policy and removes retired files
// whose removal is safe.
func (l *Log) flushLocked() error {
	l.pmu.Lock()
	chunks, top := l.pending, l.appended
	l.pending = nil
	l.pmu.Unlock()
	for i, c := range chunks {
		if _, err := c.f.fd.WriteAt(c.data, c.off); err != nil {
			l.pmu.Lock()
			l.pending = append(chunks[i:len(chunks):len(chunks)], l.pending...) // retried by the next commit
			l.pmu.Unlock()
			return l.failed("write", c.f, err)
		}
		l.markDirtyLocked(c.f)
	}
	l.pmu.Lock()
	for _, c := range chunks {
		if len(l.free) < maxFreeBuffers && cap(c.data) <= maxFreeBuffer {
			l.free = append(l.free, c.data[:0])
		}
	}
	l.pmu.Unlock()
	l.written = top
	switch {
	case l.opts.NoSync:
		l.synced = top
	case l.opts.SyncInterval == 0:
		if err := l.syncLocked(); err != nil {
			return err
		}
	default:
		l.armSyncLocked()
	}
	l.removeRetiredLocked()
	return nil
}

func (l *Log) markDirtyLocked(f *File) {
	for _, d := range l.dirty {
		if d == f {
			return
		}
	}
	l.dirty = append(l.dirty, f)
}

// syncLocked fsyncs every file written since its last fsync, and the directory when files came
// or went, with fmu held throughout (-f0's group commit, and Close).
func (l *Log) syncLocked() error {
	r := l.startSyncLocked()
	return l.endSyncLocked(r, r.run(l))
}

// syncRound is one round of fsyncs: what was written up to target, in files (and the
// directory).
type syncRound struct {
	target uint64
	files  []*File
	done   int // files synced
	dir    bool
	began  time.Time
}

func (l *Log) startSyncLocked() *syncRound {
	r := &syncRound{target: l.written, files: l.dirty, dir: l.dirDirty.Swap(false), began: time.Now()}
	l.dirty = nil
	return r
}

// run does the fsyncs. It needs fmu only when the caller's round must exclude writes (see
// backgroundSync for why the files stay open meanwhile).
func (r *syncRound) run(l *Log) error {
	l.syncing.Store(true)
	defer l.syncing.Store(false)
	time.Sleep(l.slowSync)
	if l.holdSync != nil {
		<-l.holdSync
	}
	for ; r.done < len(r.files); r.done++ {
		if f := r.files[r.done]; f.fd != nil {
			if err := datasync(f.fd); err != nil {
				return l.syncFailed("fsync", f, err)
			}
		}
	}
	if r.dir {
		if err := l.dirf.Sync(); err != nil {
			return l.syncFailed("fsync of the directory", nil, err)
		}
		r.dir = false
	}
	return nil
}

// endSyncLocked notes a round's outcome: on failure, what it did not sync is dirty again.
func (l *Log) endSyncLocked(r *syncRound, err error) error {
	defer l.observeSync(r.began)
	if err != nil {
		for _, f := range r.files[r.done:] {
			l.markDirtyLocked(f)
		}
		if r.dir {
			l.dirDirty.Store(true)
		}
		return err
	}
	l.synced = max(l.synced, r.target)
	l.lastSync = time.Now()
	l.syncs.Add(1)
	return nil
}

// backgroundSync is -f MS's fsync round. It holds fmu only to take the dirty files and to note
// the outcome, not during the fsyncs: commits need fmu to write, and an fsync of 10 MB files
// takes tens of milliseconds, which every command waited for. The files it syncs stay open
// meanwhile: removeRetiredLocked closes only files retired at or before the last synced
// sequence, all of whose writes were synced by an earlier round, so none is in this round's
// list; Close waits for the round (smu).
func (l *Log) backgroundSync() {
	l.smu.Lock()
	defer l.smu.Unlock()
	l.fmu.Lock()
	l.syncArmed = false
	if l.closed {
		l.fmu.Unlock()
		return
	}
	r := l.startSyncLocked()
	l.fmu.Unlock()
	err := r.run(l)
	l.fmu.Lock()
	var gone []*File
	if l.endSyncLocked(r, err) == nil {
		gone = l.takeRetiredLocked()
	}
	l.fmu.Unlock()
	l.removeFiles(gone)
}

// ObserveSyncs has f called with the duration of every fsync round from now on (failed ones
// included), on the goroutine that synced.
func (l *Log) ObserveSyncs(f func(time.Duration)) { l.onSync.Store(&f) }

func (l *Log) observeSync(began time.Time) {
	if f := l.onSync.Load(); f != nil {
		(*f)(time.Since(began))
	}
}

// armSyncLocked schedules the fsync that -f MS promises: at most MS after this write, whether
// or not another write comes.
func (l *Log) armSyncLocked() {
	if l.syncArmed {
		return
	}
	l.syncArmed = true
	wait := time.Until(l.lastSync.Add(l.opts.SyncInterval))
	l.timer = time.AfterFunc(max(0, wait), l.backgroundSync)
}

// removeRetiredLocked deletes the retired files whose removal no longer risks a job: the
// records that replaced them are on disk.
func (l *Log) removeRetiredLocked() { l.removeFiles(l.takeRetiredLocked()) }

// takeRetiredLocked returns the retired files whose removal no longer risks a job, no longer
// counted as dirty, for removeFiles, which needs no lock.
func (l *Log) takeRetiredLocked() []*File {
	l.pmu.Lock()
	var ready []*File
	keep := l.retired[:0]
	for _, r := range l.retired {
		if r.seq <= l.synced {
			ready = append(ready, r.f)
		} else {
			keep = append(keep, r)
		}
	}
	l.retired = keep
	l.pmu.Unlock()
	for _, f := range ready {
		for i, d := range l.dirty {
			if d == f {
				l.dirty = append(l.dirty[:i], l.dirty[i+1:]...)
				break
			}
		}
	}
	return ready
}

// removeFiles closes and deletes files taken by takeRetiredLocked. Nothing writes to them any
// more, so it runs without fmu: unlinking a 10 MB file took up to 20 ms, which commits waited
// for.
func (l *Log) removeFiles(files []*File) {
	for _, f := range files {
		if f.fd != nil {
			_ = f.fd.Close()
		}
		if err := os.Remove(filePath(l.dir, f.N)); err != nil && !os.IsNotExist(err) {
			l.log.Warn("binlog: cannot remove a compacted file", "file", FileName(f.N), "err", err)
		}
		l.dirDirty.Store(true)
	}
}

// failed counts and logs a failed write and returns it as the callers' error.
func (l *Log) failed(what string, f *File, err error) error {
	l.writeErrors.Add(1)
	return l.report(what, f, err)
}

// syncFailed is failed for an fsync.
func (l *Log) syncFailed(what string, f *File, err error) error {
	l.syncErrors.Add(1)
	return l.report(what, f, err)
}

func (l *Log) report(what string, f *File, err error) error {
	l.log.Error("binlog: "+what+" failed", "file", FileName(f.Num()), "err", err)
	return fmt.Errorf("binlog: %s of %s: %w", what, FileName(f.Num()), err)
}

// Stats are the binlog's figures, for the stats command and the metrics.
type Stats struct {
	OldestIndex, CurrentIndex uint64
	RecordsWritten, Migrated  uint64
	MaxSize                   int64
	WriteErrors               uint64 // writes that failed, and room or files that could not be made
	SyncErrors                uint64 // fsyncs that failed
	// Files counts the binlog.N files the log holds: those with records and those made ahead;
	// DiskBytes is their size on disk, preallocated space included.
	Files     int
	DiskBytes int64
	LiveBytes int64  // the live jobs' latest full records
	Bytes     uint64 // bytes of records placed since the log was opened
}

// Stats reports the log's figures (under the caller's lock).
func (l *Log) Stats() Stats {
	st := Stats{
		OldestIndex:    l.files[0].N,
		CurrentIndex:   l.current().N,
		RecordsWritten: l.records,
		Migrated:       l.migrated,
		MaxSize:        l.opts.MaxFileSize,
		WriteErrors:    l.writeErrors.Load(),
		SyncErrors:     l.syncErrors.Load(),
		LiveBytes:      l.live,
	}
	for _, f := range l.files {
		st.Files++
		st.DiskBytes += f.capacity
	}
	for _, f := range l.spares { // one being zero-filled is not there yet
		if f.ready == nil || isClosed(f.ready) && f.err == nil {
			st.Files++
			st.DiskBytes += f.capacity
		}
	}
	l.pmu.Lock()
	st.Bytes = l.appended
	l.pmu.Unlock()
	return st
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Close writes and syncs everything placed (unless NoSync), truncates the current file to what
// it holds as beanstalkd does on a clean stop, removes the unused preallocated files and
// releases the directory's lock. Called under the caller's lock, after the last placement.
func (l *Log) Close() error {
	l.smu.Lock() // a background fsync round finishes first
	defer l.smu.Unlock()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.closed {
		return nil
	}
	if l.timer != nil {
		l.timer.Stop()
	}
	err := l.flushLocked()
	if err == nil && !l.opts.NoSync {
		err = l.syncLocked()
	}
	l.closed = true
	l.prep.Wait()
	if err == nil {
		l.removeRetiredLocked()
		cur := l.current()
		err = cur.fd.Truncate(cur.size)
		for _, s := range l.spares {
			if s.fd != nil {
				_ = s.fd.Close()
				_ = os.Remove(filePath(l.dir, s.N))
			}
		}
		if !l.opts.NoSync {
			if serr := l.dirf.Sync(); err == nil {
				err = serr
			}
		}
	}
	for _, f := range append(l.files, l.spares...) {
		if f.fd != nil {
			_ = f.fd.Close()
		}
	}
	_ = l.dirf.Close()
	_ = l.lock.Close()
	return err
}
