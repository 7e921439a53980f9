package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// The protocol cannot list the jobs other clients hold, nor any job but the first of a state,
// so the jobs a run waits for or leaves behind are found by asking stats-job of each id in turn,
// pipelined, from the highest id down. These bound that scan.
const (
	scanChunk  = 1000    // stats-job commands per round trip
	scanBudget = 1 << 20 // ids at most per scan (a few seconds of a beanstalkd's time)
	// idSlack is searched above the highest id known: after a restart from its binlog, a
	// server's ids go on from the highest restored one while total-jobs counts only the puts
	// since the start.
	idSlack = 1000
	// maxNamed is the most jobs a report or a waiting line names.
	maxNamed = 20
	// A waiting line names the held jobs from a smaller scan, made at most this often: the
	// connection is the mover's, and the jobs it waits for come back on it.
	waitScanBudget = 100_000
	waitScanEvery  = 10 * time.Second
)

// OnWait sets what is told of the mover's waits.
func (s *beanstalkSource) OnWait(f func(string)) { s.onWait = f }

func (s *beanstalkSource) Deletes() bool { return true }

func (s *beanstalkSource) say(what string) {
	if s.onWait != nil {
		s.onWait(what)
	}
}

// sayWaiting tells what the coming wait is for: the jobs other clients hold, or, following, new
// jobs. Without --follow the held jobs are what the run waits for, so they are named (by an id
// scan, when their number has changed and the last scan is waitScanEvery old); following, workers
// on the old server hold jobs all the time, and a scan would only delay the move of new ones.
func (s *beanstalkSource) sayWaiting() {
	if s.onWait == nil {
		return
	}
	if s.reserved == 0 {
		s.say("new jobs (--follow)")
		return
	}
	held := fmt.Sprintf("%s reserved at the source by other clients (moved once released)", plural(s.reserved, "job"))
	if s.follow {
		s.say(held)
		return
	}
	if s.reserved != s.waitFor && time.Since(s.scannedAt) >= waitScanEvery {
		s.waitFor, s.scannedAt = s.reserved, time.Now()
		s.waitMsg = held
		jobs, _, err := s.scan(int(s.reserved), waitScanBudget, func(r JobRef) bool { return r.State == "reserved" && s.tubes.match(r.Tube) })
		if err == nil && len(jobs) > 0 {
			// Named by id and tube only: the line is repeated while the wait lasts, and a TTR
			// left would be stale in it.
			var ids []string
			for i, j := range jobs {
				if i == 5 {
					ids = append(ids, fmt.Sprintf("and %d more", len(jobs)-5))
					break
				}
				ids = append(ids, fmt.Sprintf("id %d in %s", j.ID, j.Tube))
			}
			s.waitMsg += ": " + strings.Join(ids, ", ")
		}
	}
	if s.reserved != s.waitFor {
		s.say(held) // the count changed since the jobs were named
		return
	}
	s.say(s.waitMsg)
}

// String names a job as a report does: "id 7 (tube held, reserved, TTR ends in 25s)".
func (j JobRef) String() string {
	s := fmt.Sprintf("id %d (tube %s, %s", j.ID, j.Tube, j.State)
	switch {
	case j.State == "reserved":
		s += fmt.Sprintf(", TTR ends in %s", j.TimeLeft)
	case j.State == "delayed":
		s += fmt.Sprintf(", ready in %s", j.TimeLeft)
	}
	return s + ")"
}

func plural(n uint64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Version is the server's version from stats.
func (s *beanstalkSource) Version() string {
	if s.version == "" {
		if m, err := s.serverStats(); err == nil {
			s.version = m.String("version")
		}
	}
	return s.version
}

func (s *beanstalkSource) serverStats() (beanstalk.Stats, error) { return s.c.Stats() }

// statsJobs asks stats-job of each id, pipelined; the ids that exist come back.
func (s *beanstalkSource) statsJobs(ids []uint64) ([]JobRef, error) {
	for _, id := range ids {
		s.c.Sendf("stats-job %d", id)
	}
	if err := s.c.Flush(); err != nil {
		return nil, err
	}
	var out []JobRef
	var firstErr error
	for _, id := range ids {
		body, err := s.c.ReadData()
		if errors.Is(err, beanstalk.ErrNotFound) {
			continue
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("stats-job %d: %w", id, err)
			}
			continue
		}
		m := beanstalk.ParseStats(body)
		out = append(out, JobRef{ID: id, Tube: m.String("tube"), State: m.String("state"), TimeLeft: time.Duration(m.Uint("time-left")) * time.Second})
	}
	return out, firstErr
}

// Lookup asks stats-job of ids, scanChunk at a time.
func (s *beanstalkSource) Lookup(_ context.Context, ids []uint64) ([]JobRef, error) {
	var out []JobRef
	for start := 0; start < len(ids); start += scanChunk {
		refs, err := s.statsJobs(ids[start:min(start+scanChunk, len(ids))])
		if err != nil {
			return out, err
		}
		for _, r := range refs {
			if s.tubes.match(r.Tube) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// scan looks for want jobs that keep accepts, from the highest id the server may have handed
// out down, within budget ids. It returns them, highest id first, and the range searched.
func (s *beanstalkSource) scan(want int, budget uint64, keep func(JobRef) bool) ([]JobRef, [2]uint64, error) {
	m, err := s.serverStats()
	if err != nil {
		return nil, [2]uint64{}, err
	}
	top := max(m.Uint("total-jobs"), s.maxID) + idSlack
	var out []JobRef
	hi, lo := top, top+1
	for hi > 0 && len(out) < want && top-hi < budget {
		n := min(hi, scanChunk)
		ids := make([]uint64, 0, n)
		for id := hi; id > hi-n; id-- {
			ids = append(ids, id)
		}
		refs, err := s.statsJobs(ids)
		if err != nil {
			return out, [2]uint64{lo, top}, err
		}
		for _, r := range refs {
			if keep(r) {
				out = append(out, r)
			}
		}
		lo, hi = hi-n+1, hi-n
	}
	return out, [2]uint64{lo, top}, nil
}

// Left counts the jobs still at the server per tube and names those of the moved tubes (an id
// scan), each with why it is there.
func (s *beanstalkSource) Left(_ context.Context, stopped bool) (*Leftovers, error) {
	sts, err := s.tubeStats(true)
	if err != nil {
		return nil, err
	}
	lo := &Leftovers{}
	paused := map[string]bool{}
	for _, m := range sts {
		n := m.Uint("current-jobs-ready") + m.Uint("current-jobs-delayed") + m.Uint("current-jobs-buried") + m.Uint("current-jobs-reserved")
		if !s.tubes.match(m.String("name")) {
			if n > 0 {
				lo.Unselected = append(lo.Unselected, TubeCount{Tube: m.String("name"), Jobs: n})
			}
			continue
		}
		lo.Count += int(n)
		paused[m.String("name")] = m.Uint("pause-time-left") > 0
	}
	if lo.Count == 0 {
		return lo, nil
	}
	jobs, scanned, err := s.scan(lo.Count, scanBudget, func(r JobRef) bool { return s.tubes.match(r.Tube) })
	lo.Scanned = scanned
	for i := range jobs {
		jobs[i].Why = s.why(jobs[i], stopped, paused[jobs[i].Tube])
	}
	lo.Jobs = jobs
	return lo, err
}

// why says why a job is still at the source once a run has ended.
func (s *beanstalkSource) why(j JobRef, stopped, paused bool) string {
	switch {
	case j.State == "reserved":
		return "reserved by another client: it moves once released (run migrate again, or keep --follow running) and needs no move if its worker deletes it"
	case s.noReserveJob && (j.State != "ready" || paused):
		return "the server has no reserve-job (beanstalkd before 1.12): move it offline from the binlog, or kick it first"
	case stopped:
		return "the run was stopped before it got to it: run migrate again"
	}
	return "it arrived after the run's last pass over its tube (a producer still puts there): run migrate again, or use --follow"
}
