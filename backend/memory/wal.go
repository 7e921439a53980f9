package memory

import (
	"slices"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// The binlog (beanstalkd's -b) sees the state changes beanstalkd writes — put, delete, release,
// bury, kick — plus a release with no delay, whose new priority beanstalkd forgets. Records are
// placed under b.mu, in the order of the changes; the operation then commits them after
// unlocking (endWrite), so that concurrent operations share one write and one fsync. With the
// binlog off, b.wal is nil and every hook returns at its first test.

// walUpdateSize is what each later state change of a job reserves: one short record.
const walUpdateSize = binlog.ShortSize

// compactBudgetFloor is the bytes of live jobs compaction may rewrite after any write, on top
// of twice what the write itself wrote: enough to outpace the garbage, small enough that no
// operation stalls.
const compactBudgetFloor = 4096

// compactSkipCost is what passing over a job that no longer lives in the file costs of the
// budget: an old file holds tens of thousands of dead jobs, and walking them all in one call
// (a lookup each) stalled a command for up to 12 ms at 1M jobs.
const compactSkipCost = 32

func (j *job) fullSize() int64 { return binlog.FullSize(len(j.tube.name), len(j.body)) }

// record is j's Jobrec as beanstalkd would write it now.
func (j *job) record() binlog.Record {
	r := binlog.Record{
		ID:        j.id,
		Priority:  j.priority,
		Delay:     int64(j.delay),
		TTR:       int64(j.ttr),
		CreatedAt: j.created,
		Reserves:  j.reserves,
		Timeouts:  j.timeouts,
		Releases:  j.releases,
		Buries:    j.buries,
		Kicks:     j.kicks,
	}
	switch j.state {
	case jobReady:
		r.State = binlog.Ready
	case jobDelayed:
		r.State, r.DeadlineAt = binlog.Delayed, j.at
	case jobReserved:
		r.State, r.DeadlineAt = binlog.Reserved, j.at
	case jobBuried:
		r.State = binlog.Buried
	}
	return r
}

// walReserveLocked promises room for n bytes of records; ErrOutOfMemory when the disk has none.
func (b *Backend) walReserveLocked(n int64) error {
	if b.wal == nil {
		return nil
	}
	if err := b.wal.Reserve(n); err != nil {
		return backend.ErrOutOfMemory
	}
	return nil
}

// walPutLocked writes j's first, full record (room reserved by the caller: the record plus the
// delete to come).
func (b *Backend) walPutLocked(j *job) {
	if b.wal == nil {
		return
	}
	r := j.record()
	r.Tube, r.Body = j.tube.name, bytesOf(j.body)
	f, seq, err := b.wal.WriteFull(&r, nil)
	j.wal = f
	b.walDoneLocked(seq, err, j.fullSize())
}

// walUpdateLocked writes j's new state as a short record (room reserved by the caller).
func (b *Backend) walUpdateLocked(j *job) {
	if b.wal == nil {
		return
	}
	r := j.record()
	seq, err := b.wal.WriteShort(&r, len(j.body))
	b.walDoneLocked(seq, err, walUpdateSize)
}

// walDeleteLocked writes j's deletion, with the room its put reserved.
func (b *Backend) walDeleteLocked(j *job) {
	if b.wal == nil {
		return
	}
	r := j.record()
	r.State = binlog.Invalid
	seq, err := b.wal.WriteShort(&r, len(j.body))
	b.wal.JobGone(j.wal, j.fullSize())
	j.wal = nil
	b.walDoneLocked(seq, err, walUpdateSize)
}

// walDoneLocked notes what the operation must commit, then lets compaction do its share.
func (b *Backend) walDoneLocked(seq uint64, err error, wrote int64) {
	if err != nil {
		if b.walErr == nil {
			b.walErr = err
		}
		return
	}
	b.walSeq = max(b.walSeq, seq)
	b.compactLocked(2*wrote + compactBudgetFloor)
}

// compactLocked removes the oldest files no live job needs, and, while the files hold at least
// twice as many dead bytes as live ones, rewrites the live jobs of the oldest file into the
// current one so that it can go too — up to budget bytes per call, so that no operation stalls.
// Unlike beanstalkd, live bytes count only each job's full record, not every short record it
// ever had, so long-lived jobs released and kicked many times do not pin files forever.
func (b *Backend) compactLocked(budget int64) {
	for {
		f := b.wal.Oldest()
		if f == nil {
			return
		}
		if f.Live <= 0 {
			b.wal.Retire(f)
			continue
		}
		if budget <= 0 || !b.wal.Garbage() {
			return
		}
		for f.Live > 0 && budget > 0 {
			id, ok := f.NextID()
			if !ok {
				break
			}
			j := b.jobs.Get(id)
			if j == nil || j.wal != f {
				budget -= compactSkipCost
				continue
			}
			size := j.fullSize()
			if b.wal.Reserve(size) != nil {
				return
			}
			r := j.record()
			r.Tube, r.Body = j.tube.name, bytesOf(j.body)
			nf, seq, err := b.wal.WriteFull(&r, f)
			if err != nil {
				return
			}
			j.wal = nf
			b.wal.Migrated()
			b.walSeq = max(b.walSeq, seq)
			budget -= size
		}
		if f.Live > 0 {
			return
		}
	}
}

// endWrite ends an operation that may have written records: it unlocks, commits them (per the
// fsync policy, before the caller replies), then delivers decided waits. A failed write or
// fsync becomes the operation's error unless it already has one.
func (b *Backend) endWrite(op string, errp *error) {
	b.armLocked()
	seq, werr := b.walSeq, b.walErr
	b.walSeq, b.walErr = 0, nil
	ds := b.deliveries
	b.deliveries = nil
	b.mu.Unlock()
	if seq != 0 {
		if err := b.wal.Commit(seq); err != nil && werr == nil {
			werr = err
		}
	}
	if werr != nil && *errp == nil {
		*errp = opErr(op, werr)
	}
	for _, d := range ds {
		d.deliver(d.job, d.err)
	}
}

// replaySink builds the jobs straight from the records (binlog.Sink), with no copy of its own:
// until finishLocked places them, a job's state, due and wal fields hold what was recorded.
type replaySink struct {
	b     *Backend
	order []*job // in the order of their first full record, as beanstalkd lists them
}

func newReplaySink(b *Backend) *replaySink { return &replaySink{b: b} }

func (s *replaySink) Jobs() int { return s.b.jobs.Len() }

func (s *replaySink) Put(r *binlog.Record, f *binlog.File) {
	b := s.b
	j := b.jobs.Get(r.ID)
	if j == nil {
		j = &job{id: r.ID, tIdx: -1, gIdx: -1}
		b.jobs.Put(j)
		s.order = append(s.order, j)
	} else if j.tube.name != r.Tube {
		j.tube.jobs--
		b.unrefLocked(j.tube)
		j.tube = nil
	} else {
		b.reclaim.removed(len(j.body))
	}
	if j.tube == nil {
		j.tube = b.tubeLocked(r.Tube)
		j.tube.jobs++
	}
	j.body = bodyOf(r.Body)
	b.reclaim.added(len(j.body))
	j.wal = f
	s.set(j, r)
}

func (s *replaySink) Update(r *binlog.Record) bool {
	j := s.b.jobs.Get(r.ID)
	if j == nil {
		return false
	}
	s.set(j, r)
	return true
}

func (s *replaySink) set(j *job, r *binlog.Record) {
	j.priority = r.Priority
	j.ttr = time.Duration(r.TTR)
	j.delay = time.Duration(r.Delay)
	j.created = r.CreatedAt
	j.reserves, j.timeouts, j.releases, j.buries, j.kicks = r.Reserves, r.Timeouts, r.Releases, r.Buries, r.Kicks
	switch r.State {
	case binlog.Buried:
		j.state = jobBuried
	case binlog.Delayed:
		j.state, j.at = jobDelayed, r.DeadlineAt
	default: // Ready, and Reserved: nobody holds it any more
		j.state = jobReady
	}
}

func (s *replaySink) Delete(id uint64) {
	b := s.b
	j := b.jobs.Get(id)
	if j == nil {
		return
	}
	b.jobs.Delete(id)
	b.reclaim.removed(len(j.body))
	j.tube.jobs--
	b.unrefLocked(j.tube)
}

// finishLocked makes the replayed jobs live, as beanstalkd does: reserved jobs come back ready,
// a delayed job whose time has passed is ready, and every job reserves the room for one later
// record. Unlike beanstalkd, a buried job's bury count is not raised again.
func (s *replaySink) finishLocked(now time.Time, maxID uint64) error {
	b := s.b
	live := s.order[:0]
	for _, j := range s.order {
		if b.jobs.Get(j.id) != j {
			continue // deleted
		}
		b.wal.AdoptJob(j.wal, j.id, j.fullSize())
		if j.state == jobBuried { // numbered in the order beanstalkd lists them
			b.buries++
			j.seq = b.buries
		}
		live = append(live, j)
	}
	// Into the trees last first: a B-tree filled from its high end keeps its nodes full, one
	// filled from its low end leaves them half empty (8 bytes a job more).
	for _, j := range slices.Backward(live) {
		switch {
		case j.state == jobBuried:
			j.tube.buried.Push(j)
		case j.state == jobDelayed && j.at > nanos(now):
			j.tube.delayed.Push(j)
			b.delayed.Push(j)
		default:
			b.readyLocked(j, now)
		}
	}
	b.nextID = max(b.nextID, maxID)
	if err := b.walReserveLocked(int64(b.jobs.Len()) * walUpdateSize); err != nil {
		return err
	}
	b.compactLocked(0) // removes the oldest files nothing lives in any more
	return nil
}
