package migrate

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress is told of jobs moved, and of what the mover waits for when it has nothing to move.
type Progress interface {
	Add(n int)
	// Waiting says what the mover is waiting for ("" once it moves again).
	Waiting(what string)
	Finish()
}

// NewBar is a progress bar on a terminal: jobs moved of those found, rate, ETA (total -1:
// unknown, as with --follow).
func NewBar(w io.Writer, total int64) Progress {
	return &bar{b: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(barMoving),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("jobs"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)}
}

const barMoving = "moving jobs"

type bar struct {
	b       *progressbar.ProgressBar
	mu      sync.Mutex
	waiting string
}

func (b *bar) Add(n int) { _ = b.b.Add(n) }
func (b *bar) Finish()   { _ = b.b.Finish() }

func (b *bar) Waiting(what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if what == b.waiting {
		return
	}
	b.waiting = what
	if what == "" {
		b.b.Describe(barMoving)
	} else {
		b.b.Describe("waiting for " + what)
	}
}

// NewLines is progress as a log line every interval, for logs. The lines come from a ticker of
// their own, so that they keep coming while the mover waits (for jobs other clients hold) or
// imports a large batch: a silent mover cannot be told from a stuck one.
func NewLines(log *slog.Logger, total int64, interval time.Duration) Progress {
	l := &lines{log: log, total: total, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go l.tick(interval)
	return l
}

type lines struct {
	log        *slog.Logger
	total      int64
	moved      atomic.Int64
	waiting    atomic.Pointer[string]
	start      time.Time
	stop, done chan struct{}
	once       sync.Once
}

func (l *lines) Add(n int) { l.moved.Add(int64(n)) }

func (l *lines) Waiting(what string) { l.waiting.Store(&what) }

func (l *lines) tick(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		moved := l.moved.Load()
		args := []any{"moved", moved, "found", l.total, "jobs_per_s", int64(float64(moved) / time.Since(l.start).Seconds())}
		if w := l.waiting.Load(); w != nil && *w != "" {
			args = append(args, "waiting_for", *w)
		}
		l.log.Info("migrate: progress", args...)
	}
}

func (l *lines) Finish() {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.log.Info("migrate: progress", "moved", l.moved.Load(), "found", l.total, "elapsed", time.Since(l.start).Round(time.Millisecond))
	})
}
