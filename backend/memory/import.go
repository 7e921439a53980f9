package memory

import (
	"context"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// Import stores jobs from another store with their identity (backend.Admin.Import). With a binlog,
// each job is written as a full record like a put, and the keys go to the directory's key file
// (importkeys.go) once the records are committed.
func (b *Backend) Import(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	out, added, err := b.importJobs(ctx, jobs)
	if len(added) > 0 && b.keys != nil {
		if kerr := b.keys.append(added); kerr != nil && err == nil {
			err = opErr("import", kerr)
		}
	}
	if err != nil {
		return out, err
	}
	return out, nil
}

// importJobs places the jobs under the lock and commits their records; it returns the keys it
// recorded, for the key file.
func (b *Backend) importJobs(ctx context.Context, jobs []backend.ImportJob) (out []backend.Imported, added []keyRecord, err error) {
	now, err := b.begin(ctx, "import")
	if err != nil {
		return nil, nil, err
	}
	defer b.endWrite("import", &err)
	out = make([]backend.Imported, 0, len(jobs))
	for i := range jobs {
		ij := &jobs[i]
		if id, ok := b.imported[ij.Key]; ok {
			out = append(out, backend.Imported{ID: id, Outcome: backend.AlreadyImported})
			continue
		}
		if b.keys != nil && b.sameJobLocked(ij) {
			// Committed to the binlog by a run that died before its key reached the key file.
			b.imported[ij.Key] = ij.ID
			added = append(added, keyRecord{id: ij.ID, key: ij.Key})
			out = append(out, backend.Imported{ID: ij.ID, Outcome: backend.AlreadyImported})
			continue
		}
		if err := b.walReserveLocked(binlog.FullSize(len(ij.Tube), len(ij.Body)) + walUpdateSize); err != nil {
			return out, added, err
		}
		res := backend.Imported{ID: ij.ID, Outcome: backend.IDKept}
		if ij.ID == 0 || b.jobs.Get(ij.ID) != nil {
			b.nextID++
			res = backend.Imported{ID: b.nextID, Outcome: backend.IDChanged}
		}
		b.importLocked(ij, res.ID, now)
		b.imported[ij.Key] = res.ID
		added = append(added, keyRecord{id: res.ID, key: ij.Key})
		out = append(out, res)
	}
	return out, added, nil
}

// sameJobLocked reports whether the store holds ij already under its own id: same tube, same body.
func (b *Backend) sameJobLocked(ij *backend.ImportJob) bool {
	j := b.jobs.Get(ij.ID)
	return ij.ID != 0 && j != nil && j.tube.name == ij.Tube && j.body == string(ij.Body)
}

// importLocked stores ij as job id, as Put stores a job, with its fields as given.
func (b *Backend) importLocked(ij *backend.ImportJob, id uint64, now time.Time) {
	t := b.tubeLocked(ij.Tube)
	j := &job{
		id:       id,
		tube:     t,
		priority: ij.Priority,
		body:     bodyOf(ij.Body),
		ttr:      ij.TTR,
		delay:    ij.Delay,
		created:  nanos(now.Add(-ij.Age)),
		tIdx:     -1,
		gIdx:     -1,
		reserves: ij.Reserves,
		timeouts: ij.Timeouts,
		releases: ij.Releases,
		buries:   ij.Buries,
		kicks:    ij.Kicks,
	}
	b.nextID = max(b.nextID, id)
	b.jobs.Put(j)
	b.reclaim.added(len(j.body))
	t.jobs++
	t.totalJobs++
	b.totalJobs++
	switch {
	case ij.State == backend.Buried:
		b.buryLocked(j)
		b.walPutLocked(j)
	case ij.State == backend.Delayed && ij.TimeLeft > 0:
		b.delayLocked(j, now, ij.TimeLeft)
		b.walPutLocked(j)
	default:
		j.state = jobReady
		b.walPutLocked(j)
		b.readyLocked(j, now)
	}
	if t.pol != nil {
		b.joinedLocked(j)
	}
}
