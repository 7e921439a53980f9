package migrate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/beangate/beangate/backend"
)

// errDone: the source has nothing more to move.
var errDone = errors.New("migrate: source drained")

// Options configure a Run.
type Options struct {
	Batch    int           // jobs per import; 0: 1000
	Progress Progress      // nil: none
	Log      *slog.Logger  // nil: discard
	Retry    time.Duration // pause before retrying a failed import; 0: 1s
}

// Report is what a run did.
type Report struct {
	Source, Destination string
	Moved               uint64 // imported now
	IDsKept, IDsChanged uint64
	AlreadyImported     uint64 // found imported by an earlier run (and deleted at the source now, if it Deletes)
	SourceDeletes       bool   // the source's Deletes
	NotDeleted          uint64 // imported, but gone from the source before its delete
	Paused              []string
	Notes               []string
	Elapsed             time.Duration
	// Left is what the run left at the source (nil: a source left as it was, or a run that
	// failed); LeftErr why it could not be listed.
	Left    *Leftovers
	LeftErr error
	// SourceVersion is the source server's version ("" when it cannot tell).
	SourceVersion string
}

// Run moves jobs from src to dst until the source is drained (or, following, until ctx ends).
func Run(ctx context.Context, src Source, dst Destination, opts Options) (*Report, error) {
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	if opts.Retry <= 0 {
		opts.Retry = time.Second
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	rep := &Report{Source: src.Name(), SourceVersion: src.Version(), SourceDeletes: src.Deletes()}
	if opts.Progress != nil {
		src.OnWait(opts.Progress.Waiting)
		// Also on a failure: the lines' ticker stops with it.
		defer opts.Progress.Finish()
	}
	pauses, err := src.Pauses(ctx)
	if err != nil {
		return rep, err
	}
	pausedAt := time.Now()
	for {
		jobs, err := src.Next(ctx, opts.Batch)
		if errors.Is(err, errDone) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				break // stopped (--follow ends this way)
			}
			return rep, err
		}
		res, err := importRetrying(ctx, dst, jobs, opts.Retry, log)
		if err != nil {
			return rep, err
		}
		// Committed: now the source may forget them.
		lost, err := src.Done(context.WithoutCancel(ctx), jobs)
		rep.NotDeleted += uint64(lost)
		if err != nil {
			return rep, err
		}
		for i, r := range res {
			switch r.Outcome {
			case backend.IDKept:
				rep.Moved++
				rep.IDsKept++
			case backend.IDChanged:
				rep.Moved++
				rep.IDsChanged++
			case backend.AlreadyImported:
				rep.AlreadyImported++
			}
			if d, ok := pauses[jobs[i].Tube]; ok {
				// The tube exists at the destination now: pause it for what is left of its pause.
				delete(pauses, jobs[i].Tube)
				if left := d - time.Since(pausedAt); left > 0 {
					if err := dst.PauseTube(ctx, jobs[i].Tube, left); err != nil {
						return rep, fmt.Errorf("pausing %s: %w", jobs[i].Tube, err)
					}
					rep.Paused = append(rep.Paused, jobs[i].Tube) // (a binlog destination notes it instead)
				}
			}
		}
		if opts.Progress != nil {
			opts.Progress.Add(len(jobs))
		}
	}
	// The source's connection is idle here (the run ended between batches), so it can still
	// say what is left on it, even when a signal stopped the run.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	rep.Left, rep.LeftErr = src.Left(lctx, ctx.Err() != nil)
	cancel()
	rep.Notes = append(src.Notes(), dst.Notes()...)
	if !dst.ExactlyOnce() {
		rep.Notes = append(rep.Notes, "the destination is a beanstalk server: jobs got new ids and lost their counters and age, and a crash between a put and the source's delete leaves that batch in both places")
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// importRetrying imports jobs, retrying while the destination fails (a store restarting): the
// keys make a retry of a batch that did commit harmless.
func importRetrying(ctx context.Context, dst Destination, jobs []backend.ImportJob, wait time.Duration, log *slog.Logger) ([]backend.Imported, error) {
	for attempt := 1; ; attempt++ {
		res, err := dst.Import(ctx, jobs)
		if err == nil {
			return res, nil
		}
		if !dst.ExactlyOnce() || attempt >= 30 || ctx.Err() != nil {
			return nil, fmt.Errorf("importing: %w", err)
		}
		log.Warn("migrate: import failed; retrying", "attempt", attempt, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
