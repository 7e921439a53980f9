package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress writes to stderr while a run goes on: on a terminal a line rewritten twice a second
// with the jobs put and deleted so far, and one line per finished round with its first figure.
type progress struct {
	w    io.Writer
	live bool
}

func newProgress(f *os.File) *progress {
	info, err := f.Stat()
	return &progress{w: f, live: err == nil && info.Mode()&os.ModeCharDevice != 0}
}

// watch starts reporting on a round; the returned func ends it with the round's figures.
func (p *progress) watch(label string, r *round) func([]metric) {
	start := time.Now()
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if !p.live {
			<-quit
			return
		}
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				fmt.Fprintf(p.w, "\r%-60s", fmt.Sprintf("%s %4.1fs  put %d  deleted %d", label,
					time.Since(start).Seconds(), r.ledger.inserted.Load(), r.ledger.deleted.Load()))
			}
		}
	}()
	return func(metrics []metric) {
		close(quit)
		<-finished
		var first string
		if len(metrics) > 0 {
			first = fmt.Sprintf("%s %s %s", metrics[0].Name, formatValue(metrics[0].Value), metrics[0].Unit)
		}
		line := fmt.Sprintf("%s %4.1fs  %s", label, time.Since(start).Seconds(), first)
		if p.live {
			line = "\r" + line + strings.Repeat(" ", max(0, 60-len(line)))
		}
		fmt.Fprintln(p.w, line)
	}
}
