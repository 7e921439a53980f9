package migrate

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// binlogSource reads a stopped server's binlog directory, holding its lock throughout so that
// no server starts on it meanwhile. Nothing is deleted from it: a re-run skips what was imported
// by its keys. Its jobs come in the order beanstalkd would list them (buried ones thus keep
// their bury order).
type binlogSource struct {
	name   string
	dir    *binlog.LockedReplay
	jobs   []*binlog.Job
	next   int
	tubes  matcher
	readAt time.Time
	byID   map[uint64]*binlog.Job // for Lookup
}

// openBinlogSource locks and reads dir; binlog.ErrLocked if a server holds it.
func openBinlogSource(dir string, tubes matcher, log *slog.Logger) (*binlogSource, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rp, err := binlog.ReadLocked(abs, binlog.ReadOptions{Log: log})
	if err != nil {
		return nil, err
	}
	s := &binlogSource{name: "binlog:" + abs, dir: rp, tubes: tubes, readAt: time.Now()}
	for _, j := range rp.Jobs {
		if tubes.match(j.Tube) {
			s.jobs = append(s.jobs, j)
		}
	}
	return s, nil
}

func (s *binlogSource) Name() string { return s.name }

func (s *binlogSource) Plan(context.Context) ([]TubePlan, error) {
	counts := binlog.CountByTube(s.jobs)
	out := make([]TubePlan, len(counts))
	for i, c := range counts {
		out[i] = TubePlan{Tube: c.Name, Ready: uint64(c.Ready), Delayed: uint64(c.Delayed), Buried: uint64(c.Buried)}
	}
	return out, nil
}

func (s *binlogSource) Next(_ context.Context, max int) ([]backend.ImportJob, error) {
	if s.next >= len(s.jobs) {
		return nil, errDone
	}
	end := min(s.next+max, len(s.jobs))
	now := time.Now()
	out := make([]backend.ImportJob, 0, end-s.next)
	for _, j := range s.jobs[s.next:end] {
		out = append(out, s.importJob(j, now))
	}
	s.next = end
	return out, nil
}

func (s *binlogSource) importJob(j *binlog.Job, now time.Time) backend.ImportJob {
	ij := backend.ImportJob{
		Key: fmt.Sprintf("%s#%d", s.name, j.ID), ID: j.ID, Tube: j.Tube, Priority: j.Priority,
		TTR: time.Duration(j.TTR), Delay: time.Duration(j.Delay), Age: now.Sub(time.Unix(0, j.CreatedAt)),
		Reserves: j.Reserves, Timeouts: j.Timeouts, Releases: j.Releases, Buries: j.Buries, Kicks: j.Kicks,
		Body: j.Body, State: backend.Ready,
	}
	switch j.State {
	case binlog.Buried:
		ij.State = backend.Buried
	case binlog.Delayed:
		ij.State, ij.TimeLeft = backend.Delayed, time.Unix(0, j.DeadlineAt).Sub(now)
	}
	if ij.TTR < time.Second {
		ij.TTR = time.Second
	}
	if ij.Age < 0 {
		ij.Age = 0
	}
	return ij
}

func (s *binlogSource) Done(context.Context, []backend.ImportJob) (int, error) { return 0, nil }

func (s *binlogSource) Deletes() bool { return false }

// Pauses: a binlog does not record pauses.
func (s *binlogSource) Pauses(context.Context) (map[string]time.Duration, error) { return nil, nil }

func (s *binlogSource) Notes() []string {
	return []string{"the binlog directory is left as it was: archive it rather than start a server on it again (its jobs are now in the destination)"}
}

// Version: a binlog does not record which beanstalkd wrote it (1.12 and 1.13 write the same
// format).
func (s *binlogSource) Version() string { return "" }

func (s *binlogSource) Lookup(_ context.Context, ids []uint64) ([]JobRef, error) {
	if s.byID == nil {
		s.byID = make(map[uint64]*binlog.Job, len(s.jobs))
		for _, j := range s.jobs {
			s.byID[j.ID] = j
		}
	}
	var out []JobRef
	for _, id := range ids {
		if j, ok := s.byID[id]; ok {
			out = append(out, JobRef{ID: id, Tube: j.Tube, State: binlogState(j.State)})
		}
	}
	return out, nil
}

// binlogState names a replayed job's state as the server that replays it will hold it: a job
// reserved when its server stopped comes back ready.
func binlogState(st binlog.State) string {
	if st == binlog.Reserved {
		return "ready"
	}
	return st.String()
}

// Left: the directory is left as it was (Notes says so).
func (s *binlogSource) Left(context.Context, bool) (*Leftovers, error) { return nil, nil }

// OnWait: a binlog source never waits.
func (s *binlogSource) OnWait(func(string)) {}

func (s *binlogSource) Close() error { return s.dir.Close() }
