package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/beanstalk"
)

// beanstalkSource moves the jobs of a running beanstalk server, which keeps serving its other
// clients meanwhile. Ready jobs are reserved (reserve-with-timeout 0, pipelined); ready jobs of
// a paused tube, delayed and buried ones by peek, stats-job and reserve-job (1.12+), so that
// nobody else can take them while they are copied. A job reserved by another client is left
// alone and moved once it comes back. Each job is deleted only after the destination committed
// it (Done); if the mover dies first, the server returns what it held to ready, and the next
// run finds them imported by their keys.
type beanstalkSource struct {
	addr, name string
	c          *beanstalk.Conn
	tubes      matcher
	follow     bool
	log        *slog.Logger

	tasks    []task // what is left of the current pass
	passes   int
	moved    int                      // jobs taken in the current pass
	reserved uint64                   // jobs reserved by other clients at the pass's start
	pauses   map[string]time.Duration // paused tubes at the pass's start
	watching map[string]bool
	using    string
	known    []string // the matching tubes at the pass's start

	noReserveJob bool // the server is older than 1.12
	notes        []string

	maxID     uint64 // the highest job id seen, for the id scans' ceiling
	version   string
	onWait    func(string)
	waitFor   uint64 // the reserved count the waiting description was made for
	waitMsg   string
	scannedAt time.Time
}

type task struct {
	tube   string
	state  backend.State
	paused bool
	left   uint64 // how many the tube held at the pass's start
}

// pollTubes is how often a waiting source looks for new tubes.
const pollTubes = time.Second

func openBeanstalkSource(ctx context.Context, url string, tubes matcher, follow bool, log *slog.Logger) (*beanstalkSource, error) {
	c, e, err := dialBeanstalkURL(ctx, url)
	if err != nil {
		return nil, err
	}
	name := "beanstalk://" + e.addr
	if e.tls.Enabled() {
		name = "beanstalks://" + e.addr
	}
	return &beanstalkSource{addr: e.addr, name: name, c: c, tubes: tubes, follow: follow, log: log,
		watching: map[string]bool{"default": true}, using: "default"}, nil
}

func (s *beanstalkSource) Name() string { return s.name }

func (s *beanstalkSource) Close() error { return s.c.Close() }

func (s *beanstalkSource) Notes() []string { return s.notes }

// tubeStats lists the matching tubes (every tube with all) and their stats-tube figures,
// pipelined.
func (s *beanstalkSource) tubeStats(all bool) ([]beanstalk.Stats, error) {
	tubes, err := s.c.ListTubes()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range tubes {
		if all || s.tubes.match(t) {
			names = append(names, t)
		}
	}
	for _, t := range names {
		s.c.Send("stats-tube " + t)
	}
	if err := s.c.Flush(); err != nil {
		return nil, err
	}
	var out []beanstalk.Stats
	for _, t := range names {
		body, err := s.c.ReadData()
		if errors.Is(err, beanstalk.ErrNotFound) {
			continue // gone since list-tubes
		}
		if err != nil {
			return nil, fmt.Errorf("stats-tube %s: %w", t, err)
		}
		m := beanstalk.ParseStats(body)
		m["name"] = t
		out = append(out, m)
	}
	return out, nil
}

func (s *beanstalkSource) Plan(context.Context) ([]TubePlan, error) {
	sts, err := s.tubeStats(false)
	if err != nil {
		return nil, err
	}
	var out []TubePlan
	for _, m := range sts {
		out = append(out, TubePlan{Tube: m.String("name"), Ready: m.Uint("current-jobs-ready"), Delayed: m.Uint("current-jobs-delayed"),
			Buried: m.Uint("current-jobs-buried"), Reserved: m.Uint("current-jobs-reserved"),
			Paused: time.Duration(m.Uint("pause-time-left")) * time.Second})
	}
	return out, nil
}

func (s *beanstalkSource) Pauses(context.Context) (map[string]time.Duration, error) {
	if s.pauses == nil {
		if err := s.startPass(); err != nil {
			return nil, err
		}
	}
	return s.pauses, nil
}

// startPass plans a pass over every matching tube.
func (s *beanstalkSource) startPass() error {
	sts, err := s.tubeStats(false)
	if err != nil {
		return err
	}
	s.tasks, s.moved, s.reserved, s.known = nil, 0, 0, nil
	s.pauses = map[string]time.Duration{}
	s.passes++
	for _, m := range sts {
		t := m.String("name")
		s.known = append(s.known, t)
		paused := m.Uint("pause-time-left") > 0
		if paused {
			s.pauses[t] = time.Duration(m.Uint("pause-time-left")) * time.Second
		}
		s.reserved += m.Uint("current-jobs-reserved")
		if n := m.Uint("current-jobs-ready"); n > 0 {
			s.tasks = append(s.tasks, task{tube: t, state: backend.Ready, paused: paused, left: n})
		}
		if s.noReserveJob {
			continue
		}
		if n := m.Uint("current-jobs-delayed"); n > 0 {
			s.tasks = append(s.tasks, task{tube: t, state: backend.Delayed, left: n})
		}
		if n := m.Uint("current-jobs-buried"); n > 0 {
			s.tasks = append(s.tasks, task{tube: t, state: backend.Buried, left: n})
		}
	}
	return nil
}

// Next takes up to max jobs: the next task of the pass, or, when a whole pass found nothing,
// waits on a reserve (event-driven: a put on the server returns it at once) while jobs are
// reserved elsewhere or with --follow.
func (s *beanstalkSource) Next(ctx context.Context, max int) ([]backend.ImportJob, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(s.tasks) == 0 {
			if s.passes > 0 && s.moved == 0 {
				if !s.follow && s.reserved == 0 {
					return nil, errDone
				}
				s.sayWaiting()
				jobs, err := s.wait(max)
				if err != nil || len(jobs) > 0 {
					s.say("")
					// Counted as the pass's, so that the next call starts a new pass (and
					// lists the tubes again: a steady trickle must not hide a new tube).
					s.moved += len(jobs)
					return jobs, err
				}
			}
			if err := s.startPass(); err != nil {
				return nil, err
			}
			continue
		}
		t := &s.tasks[0]
		var jobs []backend.ImportJob
		var err error
		n := int(min(uint64(max), t.left))
		if t.state == backend.Ready && !t.paused {
			jobs, err = s.reserveReady([]string{t.tube}, n, 0)
		} else {
			jobs, err = s.takeByPeek(t, n)
		}
		if err != nil {
			return nil, err
		}
		t.left -= min(t.left, uint64(n))
		if len(jobs) < n || t.left == 0 {
			s.tasks = s.tasks[1:]
		}
		if len(jobs) > 0 {
			s.say("") // (a held job may come back ready, and be found by the pass)
			s.moved += len(jobs)
			return jobs, nil
		}
	}
}

// wait is one waiting reserve of at most pollTubes on every matching tube, and with a job, the
// ready jobs that follow it.
func (s *beanstalkSource) wait(max int) ([]backend.ImportJob, error) {
	if len(s.known) == 0 {
		time.Sleep(pollTubes)
		return nil, nil
	}
	return s.reserveReady(s.known, max, int(pollTubes/time.Second))
}

// watchOnly makes the connection watch exactly tubes.
func (s *beanstalkSource) watchOnly(tubes []string) error {
	want := map[string]bool{}
	n := 0
	for _, t := range tubes {
		want[t] = true
		if !s.watching[t] {
			s.c.Send("watch " + t)
			n++
		}
	}
	for t := range s.watching {
		if !want[t] {
			s.c.Send("ignore " + t)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if err := s.c.Flush(); err != nil {
		return err
	}
	for range n {
		if err := s.c.Expect("WATCHING"); err != nil {
			return fmt.Errorf("watch/ignore: %w", err)
		}
	}
	s.watching = want
	return nil
}

// reserveReady reserves up to n ready jobs of tubes: the first with timeout (seconds; 0: none),
// the rest pipelined without waiting; then their stats-job, pipelined.
func (s *beanstalkSource) reserveReady(tubes []string, n int, timeout int) ([]backend.ImportJob, error) {
	if err := s.watchOnly(tubes); err != nil {
		return nil, err
	}
	type got struct {
		id   uint64
		body []byte
	}
	var held []got
	if timeout > 0 {
		_ = s.c.SetDeadline(time.Now().Add(time.Duration(timeout+5) * time.Second))
		s.c.Sendf("reserve-with-timeout %d", timeout)
		err := s.c.Flush()
		var id uint64
		var body []byte
		if err == nil {
			id, body, err = s.c.ReadJob("RESERVED")
		}
		_ = s.c.SetDeadline(time.Time{})
		if errors.Is(err, beanstalk.ErrTimedOut) || errors.Is(err, beanstalk.ErrDeadlineSoon) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reserve: %w", err)
		}
		held = append(held, got{id, bytes.Clone(body)})
		n--
	}
	// Pipelined in growing rounds, so that a trickle costs a few commands, not n.
	var firstErr error
	for round, want := 16, n; want > 0 && firstErr == nil; round *= 2 {
		k := min(round, want)
		for range k {
			s.c.Send("reserve-with-timeout 0")
		}
		if err := s.c.Flush(); err != nil {
			return nil, err
		}
		taken := 0
		for range k {
			id, body, err := s.c.ReadJob("RESERVED")
			switch {
			case err == nil:
				held = append(held, got{id, bytes.Clone(body)})
				taken++
			case errors.Is(err, beanstalk.ErrTimedOut) || errors.Is(err, beanstalk.ErrDeadlineSoon):
			case firstErr == nil:
				firstErr = err
			}
		}
		if taken < k {
			break
		}
		want -= k
	}
	out := make([]backend.ImportJob, 0, len(held))
	for _, h := range held {
		s.c.Sendf("stats-job %d", h.id)
	}
	if err := s.c.Flush(); err != nil {
		return nil, err
	}
	for _, h := range held {
		body, err := s.c.ReadData()
		if err != nil {
			return nil, fmt.Errorf("stats-job %d: %w", h.id, err)
		}
		ij := s.importJob(h.id, beanstalk.ParseStats(body), h.body)
		ij.State, ij.TimeLeft = backend.Ready, 0
		ij.Reserves-- // ours
		out = append(out, ij)
	}
	return out, firstErr
}

// takeByPeek takes up to n jobs of t's state one by one: peek, then stats-job and reserve-job
// together; the stats, read before the reservation, are the job's own.
func (s *beanstalkSource) takeByPeek(t *task, n int) ([]backend.ImportJob, error) {
	if s.using != t.tube {
		if err := s.c.Use(t.tube); err != nil {
			return nil, err
		}
		s.using = t.tube
	}
	state := map[backend.State]string{backend.Ready: "ready", backend.Delayed: "delayed", backend.Buried: "buried"}[t.state]
	var out []backend.ImportJob
	for range n {
		id, body, err := s.c.PeekState(state)
		if errors.Is(err, beanstalk.ErrNotFound) {
			break
		}
		if err != nil {
			return out, err
		}
		body = bytes.Clone(body)
		s.c.Sendf("stats-job %d", id)
		s.c.Sendf("reserve-job %d", id)
		if err := s.c.Flush(); err != nil {
			return out, err
		}
		stats, serr := s.c.ReadData()
		var m beanstalk.Stats
		if serr == nil {
			m = beanstalk.ParseStats(stats) // before the next read reuses its buffer
		}
		_, _, rerr := s.c.ReadJob("RESERVED")
		if errors.Is(rerr, beanstalk.ErrUnknownCommand) {
			s.noReserveJob = true
			s.notes = append(s.notes, "the server has no reserve-job (beanstalkd before 1.12): delayed and buried jobs, and ready jobs of paused tubes, cannot be moved online; they stay on the server (move them offline from its binlog, or kick them first)")
			s.tasks = nil
			return out, nil
		}
		if errors.Is(rerr, beanstalk.ErrNotFound) || errors.Is(serr, beanstalk.ErrNotFound) {
			continue // taken by someone else meanwhile
		}
		if serr != nil {
			return out, fmt.Errorf("stats-job %d: %w", id, serr)
		}
		if rerr != nil {
			return out, fmt.Errorf("reserve-job %d: %w", id, rerr)
		}
		out = append(out, s.importJob(id, m, body))
	}
	return out, nil
}

// keyPrefix starts the import keys of the server's jobs. It names the server, not how it is
// reached: a run over TLS and one without find each other's imports.
func (s *beanstalkSource) keyPrefix() string { return "beanstalk://" + s.addr + "#" }

// importJob builds a job from its stats-job figures.
func (s *beanstalkSource) importJob(id uint64, m beanstalk.Stats, body []byte) backend.ImportJob {
	sec := func(k string) time.Duration { return time.Duration(m.Uint(k)) * time.Second }
	ij := backend.ImportJob{
		Key: s.keyPrefix() + strconv.FormatUint(id, 10), ID: id, Tube: m.String("tube"), Priority: uint32(m.Uint("pri")),
		TTR: max(sec("ttr"), time.Second), Delay: sec("delay"), Age: sec("age"),
		Reserves: uint32(m.Uint("reserves")), Timeouts: uint32(m.Uint("timeouts")), Releases: uint32(m.Uint("releases")),
		Buries: uint32(m.Uint("buries")), Kicks: uint32(m.Uint("kicks")), Body: body, State: backend.Ready,
	}
	s.maxID = max(s.maxID, id)
	switch m.String("state") {
	case "delayed":
		ij.State, ij.TimeLeft = backend.Delayed, sec("time-left")
		if ij.TimeLeft == 0 {
			// stats-job rounds down: a job due within the second stays delayed a moment.
			ij.TimeLeft = time.Millisecond
		}
	case "buried":
		ij.State = backend.Buried
	}
	return ij
}

// Done deletes the jobs at the server, pipelined.
func (s *beanstalkSource) Done(_ context.Context, jobs []backend.ImportJob) (int, error) {
	for _, j := range jobs {
		s.c.SendDelete(j.ID)
	}
	if err := s.c.Flush(); err != nil {
		return 0, err
	}
	lost := 0
	for _, j := range jobs {
		if err := s.c.Expect("DELETED"); errors.Is(err, beanstalk.ErrNotFound) {
			lost++
			s.log.Warn("migrate: a job imported could not be deleted at the source (its reservation ran out and another client took it?)", "id", j.ID)
		} else if err != nil {
			return lost, fmt.Errorf("delete %d: %w", j.ID, err)
		}
	}
	return lost, nil
}
