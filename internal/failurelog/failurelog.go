// Package failurelog keeps a failure that repeats — every command while the store is down —
// from flooding the log: the first failure of a run is logged as it happens, then one summary
// a period while more follow ("143 store calls failed in the last 1s"), with the latest error.
// A period without failure ends the run silently: the store's recovery is its own line
// (backend.Reachability), said once.
package failurelog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/beangate/beangate/backend"
)

// DefaultPeriod is Options.Period's default.
const DefaultPeriod = time.Second

// Options configures a Log.
type Options struct {
	// Level of every line.
	Level slog.Level
	// Counted is what a summary counts, a plural with its verb: "store calls failed" makes
	// "143 store calls failed in the last 1s".
	Counted string
	// Period between summaries; 0 means DefaultPeriod.
	Period time.Duration
	// Clock times the summaries; nil means the wall clock.
	Clock backend.Clock
}

// Log logs one kind of repeating failure, from any number of goroutines.
type Log struct {
	log  *slog.Logger
	opts Options

	mu      sync.Mutex
	since   time.Time // the run's first failure; zero between runs
	due     time.Time // the end of the period under way
	count   int       // failures since the last line
	lastErr error
}

// New returns a Log writing to log.
func New(log *slog.Logger, opts Options) *Log {
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.Clock == nil {
		opts.Clock = wallClock{}
	}
	return &Log{log: log, opts: opts}
}

// Failed records a failure. The first of a run is logged at once, as msg with args (slog
// key-value pairs) and err (when not nil); the others are counted for the next summary, which
// carries the latest err.
func (l *Log) Failed(msg string, err error, args ...any) {
	l.mu.Lock()
	if !l.since.IsZero() {
		l.count++
		l.lastErr = err
		l.mu.Unlock()
		return
	}
	l.since = l.opts.Clock.Now()
	l.due = l.since.Add(l.opts.Period)
	backend.AfterFuncAt(l.opts.Clock, l.due, l.summarise)
	l.mu.Unlock()
	if err != nil {
		args = append(args, "err", err)
	}
	l.log.Log(context.Background(), l.opts.Level, msg, args...)
}

// summarise ends a period: it logs how many failures came in it, or, if none did, ends the run.
func (l *Log) summarise() {
	l.mu.Lock()
	if l.count == 0 {
		l.since = time.Time{}
		l.mu.Unlock()
		return
	}
	n, err, failing := l.count, l.lastErr, l.opts.Clock.Now().Sub(l.since)
	l.count, l.lastErr = 0, nil
	l.due = l.due.Add(l.opts.Period)
	backend.AfterFuncAt(l.opts.Clock, l.due, l.summarise)
	l.mu.Unlock()
	args := []any{"failing_for", failing.Round(time.Millisecond)}
	if err != nil {
		args = append(args, "err", err)
	}
	l.log.Log(context.Background(), l.opts.Level, fmt.Sprintf("%d %s in the last %s", n, l.opts.Counted, l.opts.Period), args...)
}

// StoreLogs are the failure logs of a store's own work, as warnings: the sessions it fails to
// end (one per client that leaves while the store is down), and its background work
// (heartbeats, reapers, reconnects), which runs every second or two whatever the load, so that
// a summary a second would be a line a run: it gets one a minute.
type StoreLogs struct {
	SessionEnds, Background *Log
}

// NewStoreLogs returns the failure logs of the store named store ("Redis").
func NewStoreLogs(log *slog.Logger, store string) StoreLogs {
	return StoreLogs{
		SessionEnds: New(log, Options{Level: slog.LevelWarn, Counted: "session ends failed"}),
		Background:  New(log, Options{Level: slog.LevelWarn, Counted: "background calls to " + store + " failed", Period: time.Minute}),
	}
}

// wallClock times summaries with the runtime's timers: a log line needs no better than a
// millisecond (backend.SystemClock sleeps in the kernel to be punctual).
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) backend.Timer { return time.AfterFunc(d, f) }
