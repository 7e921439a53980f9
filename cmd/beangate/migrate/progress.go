package migrate

import (
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress is told of jobs moved.
type Progress interface {
	Add(n int)
	Finish()
}

// NewBar is a progress bar on a terminal: jobs moved of those found, rate, ETA (total -1:
// unknown, as with --follow).
func NewBar(w io.Writer, total int64) Progress {
	return &bar{progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("moving jobs"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("jobs"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)}
}

type bar struct{ b *progressbar.ProgressBar }

func (b *bar) Add(n int) { _ = b.b.Add(n) }
func (b *bar) Finish()   { _ = b.b.Finish() }

// NewLines is progress as a log line at most every interval, for logs.
func NewLines(log *slog.Logger, total int64, interval time.Duration) Progress {
	return &lines{log: log, total: total, every: interval, start: time.Now(), last: time.Now()}
}

type lines struct {
	log         *slog.Logger
	total       int64
	moved       atomic.Int64
	every       time.Duration
	start, last time.Time
}

func (l *lines) Add(n int) {
	moved := l.moved.Add(int64(n))
	if time.Since(l.last) < l.every {
		return
	}
	l.last = time.Now()
	rate := float64(moved) / time.Since(l.start).Seconds()
	l.log.Info("migrate: progress", "moved", moved, "found", l.total, "jobs_per_s", int64(rate))
}

func (l *lines) Finish() {
	l.log.Info("migrate: progress", "moved", l.moved.Load(), "found", l.total, "elapsed", time.Since(l.start).Round(time.Millisecond))
}
