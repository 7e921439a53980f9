package main

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
	"github.com/beangate/beangate/internal/procfs"
)

// statsSamples is how many `stats` round trips the conns scenario times.
const statsSamples = 200

// runConns: open -conns connections, one `list-tube-used` round trip each so the server has
// accepted them all, then hold them idle. Memory is the server's RSS growth per connection
// (needs the server's pid: -pid, or found by port in /proc); latency is the `stats` round trip
// while they are held. Memory is measured against the RSS before the first conns round of the
// server, since an allocator reuses what earlier rounds freed; run it on a fresh server.
func runConns(r *round) ([]metric, error) {
	pid := r.target.PID
	if pid == 0 {
		pid, _ = procfs.ListenerPID(r.target.primary()) // a remote server: memory is simply not reported
	}
	if r.server.rssBaseline == 0 {
		r.server.rssBaseline = readRSS(pid)
	}
	before := r.server.rssBaseline
	idle, err := openIdle(r, r.opts.Conns)
	defer closeAbruptly(idle)
	if err != nil {
		return nil, err
	}
	time.Sleep(100 * time.Millisecond) // let the server finish its per-connection bookkeeping
	after := readRSS(pid)
	c, err := r.dial()
	if err != nil {
		return nil, err
	}
	rtts := make([]time.Duration, 0, statsSamples)
	for range statsSamples {
		t := time.Now()
		if _, err := c.Stats(); err != nil {
			return nil, err
		}
		rtts = append(rtts, time.Since(t))
	}
	slices.Sort(rtts)
	return append([]metric{
		{Name: "memory per conn", Unit: "KiB", Value: (after - before) / float64(len(idle)), Lower: true},
		{Name: "server RSS", Unit: "MiB", Value: after / 1024, Lower: true},
	}, latencyMetrics("stats", rtts)...), nil
}

// readRSS is the process's RSS in KiB, NaN when it cannot be read.
func readRSS(pid int) float64 {
	if pid == 0 {
		return math.NaN()
	}
	kib, err := procfs.RSSKiB(pid)
	if err != nil {
		return math.NaN()
	}
	return kib
}

// openIdle dials n connections from a few goroutines and checks each with one round trip.
func openIdle(r *round, n int) ([]*beanstalk.Conn, error) {
	const dialers = 32
	conns := make([]*beanstalk.Conn, n)
	errs := make(chan error, dialers)
	var wg sync.WaitGroup
	for d := range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := d; i < n; i += dialers {
				c, err := dial(r.target.primary())
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				conns[i] = c
				c.Send("list-tube-used")
				if err := c.Flush(); err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				if err := c.Expect("USING"); err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	opened := slices.DeleteFunc(conns, func(c *beanstalk.Conn) bool { return c == nil })
	return opened, <-errs
}

// closeAbruptly resets the connections instead of closing them gracefully, so thousands of
// client sockets do not sit in TIME_WAIT and exhaust loopback ports over several rounds.
func closeAbruptly(conns []*beanstalk.Conn) {
	for _, c := range conns {
		_ = c.Reset()
	}
}
