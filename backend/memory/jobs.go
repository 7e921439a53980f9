package memory

import (
	"context"
	"time"
	"unsafe"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// job is one stored job. It sits in exactly one structure per its state: its tube's ready tree,
// its tube's delay tree plus Backend.delayed, its tube's buried tree, or its owner's reserved
// heap plus Backend.deadlines.
//
// A server holds millions of these, so the record is kept to 128 bytes, one size class of the
// allocator (see TestJobRecordSize): times are Unix nanoseconds, the one time and the one
// sequence number a state needs share a field, the body is a string header (no capacity word).
type job struct {
	id    uint64
	tube  *tube
	body  string       // the job's bytes, never changed (bytesOf gives them back as a slice)
	owner *session     // reserved: who holds it
	wal   *binlog.File // the binlog file holding its latest full record; nil without a binlog

	ttr     time.Duration
	delay   time.Duration // as last given by put or release
	created int64         // Unix nanoseconds
	// at is, in Unix nanoseconds: ready, since when; delayed, when it becomes ready (due);
	// reserved, when its TTR runs out (deadline).
	at int64
	// seq is, reserved: the reservation's place in the order of all reservations (a closing
	// session returns its jobs in this order, as beanstalkd does); buried: its place in the order
	// of all buries, which its tube's buried jobs are kept in.
	seq uint64

	tIdx     int32 // position in the owner's reserved heap
	gIdx     int32 // position in Backend.delayed or Backend.deadlines
	priority uint32

	reserves, timeouts, releases, buries, kicks uint32

	state jobState
	// expired: its tube's expiry has acted on it (buried it), and does not again.
	expired bool
	eIdx    int32 // position + 1 in Backend.pol.expiring; 0 when not in it
}

// jobState is a backend.State in a byte.
type jobState uint8

const (
	jobReady    = jobState(backend.Ready)
	jobDelayed  = jobState(backend.Delayed)
	jobReserved = jobState(backend.Reserved)
	jobBuried   = jobState(backend.Buried)
)

// nanos and timeAt convert between the clock's times and a job's Unix nanoseconds.
func nanos(t time.Time) int64   { return t.UnixNano() }
func timeAt(ns int64) time.Time { return time.Unix(0, ns) }

// bodyOf keeps b as a job's body without copying it: the caller hands b over and never writes
// to it again.
func bodyOf(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// bytesOf is a body as the slice the Backend interface carries; nobody may write to it.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func byPriority(a, b *job) bool {
	return a.priority < b.priority || (a.priority == b.priority && a.id < b.id)
}

// byDue orders delayed jobs, byDeadline reserved ones: both by at, then id.
func byDue(a, b *job) bool { return a.at < b.at || (a.at == b.at && a.id < b.id) }

func byBurial(a, b *job) bool { return a.seq < b.seq }

func byDeadline(a, b *job) bool { return byDue(a, b) }

func setTubeIndex(j *job, i int)   { j.tIdx = int32(i) }
func setGlobalIndex(j *job, i int) { j.gIdx = int32(i) }

func (j *job) public() *backend.Job {
	return &backend.Job{ID: j.id, Tube: j.tube.name, Priority: j.priority, Body: bytesOf(j.body)}
}

// reserveReadyLocked makes a ready j, detached by the caller, reserved by s from at, and
// returns it as the reply says, with how long it was ready.
func (b *Backend) reserveReadyLocked(j *job, s *session, at time.Time) *backend.Job {
	pub := j.public()
	pub.ReadyFor, pub.HasReadyFor = at.Sub(timeAt(j.at)), true
	b.reserveLocked(j, s, at)
	return pub
}

// detachLocked takes j out of the structure of its current state. A reserved job keeps its
// owner link until the caller decides.
func (b *Backend) detachLocked(j *job) {
	t := j.tube
	switch j.state {
	case jobReady:
		t.ready.Remove(j)
		if j.priority < backend.UrgentPriority {
			t.urgent--
		}
	case jobDelayed:
		t.delayed.Remove(j)
		b.delayed.Remove(int(j.gIdx))
	case jobBuried:
		t.buried.Remove(j)
	case jobReserved:
		j.owner.reserved.Remove(int(j.tIdx))
		b.deadlines.Remove(int(j.gIdx))
		t.reserved--
		b.rekeySessionWaitersLocked(j.owner)
		j.owner = nil
	}
	j.state = 0
}

// readyLocked makes a detached j ready and hands it to a waiting reserve if one can take it.
func (b *Backend) readyLocked(j *job, at time.Time) {
	t := j.tube
	j.state = jobReady
	j.at = nanos(at)
	t.ready.Push(j)
	if j.priority < backend.UrgentPriority {
		t.urgent++
	}
	b.serveLocked(t, at)
}

func (b *Backend) delayLocked(j *job, at time.Time, d time.Duration) {
	j.state = jobDelayed
	j.at = nanos(at.Add(d))
	j.tube.delayed.Push(j)
	b.delayed.Push(j)
}

func (b *Backend) buryLocked(j *job) {
	j.state = jobBuried
	b.buries++
	j.seq = b.buries
	j.tube.buried.Push(j)
}

// reserveLocked makes a detached j reserved by s from at.
func (b *Backend) reserveLocked(j *job, s *session, at time.Time) {
	b.recordLocked(j, at, backend.EventReserved, s, 0, "")
	j.state = jobReserved
	j.owner = s
	j.at = nanos(at.Add(j.ttr))
	b.reservations++
	j.seq = b.reservations
	j.reserves++
	j.tube.reserved++
	s.reserved.Push(j)
	b.deadlines.Push(j)
	b.rekeySessionWaitersLocked(s)
}

// removeLocked forgets a detached j and drops its tube reference.
func (b *Backend) removeLocked(j *job) {
	if j.tube.pol != nil {
		b.leftLocked(j)
	}
	b.jobs.Delete(j.id)
	if len(b.hist) > 0 {
		delete(b.hist, j.id)
	}
	b.reclaim.removed(len(j.body))
	j.tube.jobs--
	b.unrefLocked(j.tube)
}

// reservedBy returns job id if s holds it.
func (b *Backend) reservedBy(s backend.SessionID, id uint64) (*job, error) {
	j := b.jobs.Get(id)
	if j == nil || j.state != jobReserved || j.owner.id != s {
		return nil, backend.ErrNotFound
	}
	return j, nil
}

// PutBatch stores jobs one Put at a time: each takes microseconds, in memory.
func (b *Backend) PutBatch(ctx context.Context, ps []backend.PutParams) []backend.PutResult {
	return backend.PutEach(ctx, b, ps)
}

// Put stores a new job in p.Tube.
func (b *Backend) Put(ctx context.Context, p backend.PutParams) (id uint64, err error) {
	now, err := b.begin(ctx, "put")
	if err != nil {
		return 0, err
	}
	defer b.endWrite("put", &err)
	return b.putLocked(p, now)
}

// putLocked is Put under the lock, for Put and FireSchedule.
func (b *Backend) putLocked(p backend.PutParams, now time.Time) (uint64, error) {
	if t := b.tubes[p.Tube]; t != nil && t.pol != nil && t.pol.unique != nil {
		if dup := b.duplicateLocked(t, p.Body); dup != nil {
			b.actLocked(t.name, backend.PolicyUnique, backend.ActionDedupe, dup.id)
			return dup.id, nil
		}
	}
	if err := b.walReserveLocked(binlog.FullSize(len(p.Tube), len(p.Body)) + walUpdateSize); err != nil {
		return 0, err
	}
	t := b.tubeLocked(p.Tube)
	b.nextID++
	j := &job{
		id:       b.nextID,
		tube:     t,
		priority: p.Priority,
		body:     bodyOf(p.Body),
		ttr:      p.TTR,
		delay:    p.Delay,
		created:  nanos(now),
		tIdx:     -1,
		gIdx:     -1,
	}
	b.jobs.Put(j)
	b.reclaim.added(len(j.body))
	t.jobs++
	t.totalJobs++
	b.totalJobs++
	if p.Delay > 0 {
		b.delayLocked(j, now, p.Delay)
		b.walPutLocked(j)
	} else {
		j.state = jobReady // as recorded: a waiting reserve may take it at once
		b.walPutLocked(j)
		b.readyLocked(j, now)
	}
	if t.pol != nil {
		b.joinedLocked(j)
		if t.pol.History {
			b.startHistoryLocked(j, now, b.sessions[p.Session], p.Delay)
		}
	}
	return j.id, nil
}

// ReserveJob reserves job id for s if it is ready, delayed or buried.
func (b *Backend) ReserveJob(ctx context.Context, sid backend.SessionID, id uint64) (*backend.Job, error) {
	now, err := b.begin(ctx, "reserve-job")
	if err != nil {
		return nil, err
	}
	defer b.end()
	s, err := b.sessionLocked("reserve-job", sid)
	if err != nil {
		return nil, err
	}
	j := b.jobs.Get(id)
	if j == nil || j.state == jobReserved {
		return nil, backend.ErrNotFound
	}
	b.detachLocked(j)
	b.reserveLocked(j, s, now)
	return j.public(), nil
}

// Delete removes job id unless another session holds it.
func (b *Backend) Delete(ctx context.Context, sid backend.SessionID, id uint64) (err error) {
	now, err := b.begin(ctx, "delete")
	if err != nil {
		return err
	}
	defer b.endWrite("delete", &err)
	j := b.jobs.Get(id)
	if j == nil || (j.state == jobReserved && j.owner.id != sid) {
		return backend.ErrNotFound
	}
	b.walDeleteLocked(j)
	held := j.state == jobReserved
	b.detachLocked(j)
	t := j.tube
	t.cmdDelete++
	b.removeLocked(j)
	if held && t.pol != nil {
		b.slotFreedLocked(t, now)
	}
	return nil
}

// Release returns a job reserved by p.Session to ready or delayed.
func (b *Backend) Release(ctx context.Context, p backend.ReleaseParams) (err error) {
	now, err := b.begin(ctx, "release")
	if err != nil {
		return err
	}
	defer b.endWrite("release", &err)
	j, err := b.reservedBy(p.Session, p.ID)
	if err != nil {
		return err
	}
	if err := b.walReserveLocked(walUpdateSize); err != nil {
		return err
	}
	b.recordLocked(j, now, backend.EventReleased, j.owner, p.Delay, "")
	b.detachLocked(j)
	j.priority = p.Priority
	j.delay = p.Delay
	j.releases++
	if t := j.tube; t.pol != nil {
		placed, buried := b.comeBackLocked(j, now, p.Delay, true)
		if !placed {
			b.requeueLocked(j, now, p.Delay)
		}
		b.slotFreedLocked(t, now)
		if buried {
			return backend.ErrBuried
		}
		return nil
	}
	b.requeueLocked(j, now, p.Delay)
	return nil
}

// requeueLocked makes a released j delayed by delay, or ready, and records it.
func (b *Backend) requeueLocked(j *job, now time.Time, delay time.Duration) {
	if delay > 0 {
		b.delayLocked(j, now, delay)
		b.walUpdateLocked(j)
	} else {
		// beanstalkd writes nothing here and forgets the new priority on restart.
		j.state = jobReady
		b.walUpdateLocked(j)
		b.readyLocked(j, now)
	}
}

// Bury moves a job reserved by s to the end of its tube's buried list.
func (b *Backend) Bury(ctx context.Context, sid backend.SessionID, id uint64, priority uint32) (err error) {
	now, err := b.begin(ctx, "bury")
	if err != nil {
		return err
	}
	defer b.endWrite("bury", &err)
	j, err := b.reservedBy(sid, id)
	if err != nil {
		return err
	}
	if err := b.walReserveLocked(walUpdateSize); err != nil {
		return err
	}
	b.recordLocked(j, now, backend.EventBuried, j.owner, 0, "")
	b.detachLocked(j)
	j.priority = priority
	j.buries++
	b.buryLocked(j)
	b.walUpdateLocked(j)
	if j.tube.pol != nil {
		b.slotFreedLocked(j.tube, now)
	}
	return nil
}

// Touch restarts the TTR of a job reserved by s.
func (b *Backend) Touch(ctx context.Context, sid backend.SessionID, id uint64) error {
	now, err := b.begin(ctx, "touch")
	if err != nil {
		return err
	}
	defer b.end()
	j, err := b.reservedBy(sid, id)
	if err != nil {
		return err
	}
	j.at = nanos(now.Add(j.ttr))
	b.recordLocked(j, now, backend.EventTouched, j.owner, 0, "")
	j.owner.reserved.Fix(int(j.tIdx))
	b.deadlines.Fix(int(j.gIdx))
	b.rekeySessionWaitersLocked(j.owner)
	return nil
}

// Kick moves up to bound buried jobs of tube to ready, or, with none buried, delayed ones.
func (b *Backend) Kick(ctx context.Context, name string, bound uint64) (n uint64, err error) {
	now, err := b.begin(ctx, "kick")
	if err != nil {
		return 0, err
	}
	defer b.endWrite("kick", &err)
	t := b.tubes[name]
	if t == nil {
		return 0, nil
	}
	// As beanstalkd: each kick reserves room for its record, and a kick that cannot stops there.
	if t.buried.Len() > 0 {
		for ; n < bound && t.buried.Len() > 0; n++ {
			oldest, _ := t.buried.Top()
			if err := b.kickLocked(oldest, now); err != nil {
				return n, kickErr(n, err)
			}
		}
		return n, nil
	}
	for ; n < bound && t.delayed.Len() > 0; n++ {
		j, _ := t.delayed.Top()
		if err := b.kickLocked(j, now); err != nil {
			return n, kickErr(n, err)
		}
	}
	return n, nil
}

// kickErr: a kick that moved some jobs before running out of room reports those.
func kickErr(n uint64, err error) error {
	if n > 0 {
		return nil
	}
	return err
}

// KickJob moves one buried or delayed job to ready.
func (b *Backend) KickJob(ctx context.Context, id uint64) (err error) {
	now, err := b.begin(ctx, "kick-job")
	if err != nil {
		return err
	}
	defer b.endWrite("kick-job", &err)
	j := b.jobs.Get(id)
	if j == nil || (j.state != jobBuried && j.state != jobDelayed) {
		return backend.ErrNotFound
	}
	return b.kickLocked(j, now)
}

func (b *Backend) kickLocked(j *job, at time.Time) error {
	if err := b.walReserveLocked(walUpdateSize); err != nil {
		return err
	}
	b.recordLocked(j, at, backend.EventKicked, nil, 0, "")
	b.detachLocked(j)
	j.kicks++
	j.state = jobReady
	b.walUpdateLocked(j)
	b.readyLocked(j, at)
	return nil
}

// Peek returns job id in whatever state.
func (b *Backend) Peek(ctx context.Context, id uint64) (*backend.Job, error) {
	if _, err := b.begin(ctx, "peek"); err != nil {
		return nil, err
	}
	defer b.end()
	j := b.jobs.Get(id)
	if j == nil {
		return nil, backend.ErrNotFound
	}
	return j.public(), nil
}

// PeekState returns tube's next ready, soonest delayed or oldest buried job.
func (b *Backend) PeekState(ctx context.Context, name string, state backend.State) (*backend.Job, error) {
	if _, err := b.begin(ctx, "peek"); err != nil {
		return nil, err
	}
	defer b.end()
	t := b.tubes[name]
	if t == nil {
		return nil, backend.ErrNotFound
	}
	var (
		j  *job
		ok bool
	)
	switch state {
	case backend.Ready:
		j, ok = t.ready.Top()
	case backend.Delayed:
		j, ok = t.delayed.Top()
	case backend.Buried:
		j, ok = t.buried.Top()
	}
	if !ok {
		return nil, backend.ErrNotFound
	}
	return j.public(), nil
}
