package gateway

import (
	"sync"
	"sync/atomic"
)

// cmd identifies a command for the cmd-* counters of stats.
type cmd int

// The counted commands, in the order stats prints them. reserve-job and kick-job are counted
// like beanstalkd counts them: internally, printed nowhere.
const (
	cmdPut cmd = iota
	cmdPeek
	cmdPeekReady
	cmdPeekDelayed
	cmdPeekBuried
	cmdReserve
	cmdReserveWithTimeout
	cmdDelete
	cmdRelease
	cmdUse
	cmdWatch
	cmdIgnore
	cmdBury
	cmdKick
	cmdTouch
	cmdStats
	cmdStatsJob
	cmdStatsTube
	cmdListTubes
	cmdListTubeUsed
	cmdListTubesWatched
	cmdPauseTube
	cmdReserveJob
	cmdKickJob
	numCmds
)

// printedCmds is how many of the counters stats prints (all before cmdReserveJob).
const printedCmds = cmdReserveJob

var cmdStatNames = [printedCmds]string{
	"cmd-put", "cmd-peek", "cmd-peek-ready", "cmd-peek-delayed", "cmd-peek-buried",
	"cmd-reserve", "cmd-reserve-with-timeout", "cmd-delete", "cmd-release", "cmd-use",
	"cmd-watch", "cmd-ignore", "cmd-bury", "cmd-kick", "cmd-touch", "cmd-stats",
	"cmd-stats-job", "cmd-stats-tube", "cmd-list-tubes", "cmd-list-tube-used",
	"cmd-list-tubes-watched", "cmd-pause-tube",
}

// serverStats are the figures a gateway counts itself, rather than reads from the store: command
// and connection counters. There is one set per tenant (tenantState.stats), the main store's
// being Server.stats; rejected is counted in that one only, as a connection refused has no
// tenant yet.
type serverStats struct {
	cmds             [numCmds]atomic.Uint64
	connections      atomic.Int64 // open now
	totalConnections atomic.Uint64
	producers        atomic.Int64
	workers          atomic.Int64
	waiting          atomic.Int64
	rejected         [NumRejections]atomic.Uint64

	mu           sync.Mutex
	tubesWaiting map[string]int64 // per tube: waiting connections watching it
}

func newServerStats() *serverStats {
	return &serverStats{tubesWaiting: map[string]int64{}}
}

func (s *serverStats) count(c cmd) { s.cmds[c].Add(1) }

// beginWaiting and endWaiting bracket a connection's wait in reserve.
func (s *serverStats) beginWaiting(tubes []string) {
	s.waiting.Add(1)
	s.mu.Lock()
	for _, t := range tubes {
		s.tubesWaiting[t]++
	}
	s.mu.Unlock()
}

func (s *serverStats) endWaiting(tubes []string) {
	s.waiting.Add(-1)
	s.mu.Lock()
	for _, t := range tubes {
		if s.tubesWaiting[t]--; s.tubesWaiting[t] <= 0 {
			delete(s.tubesWaiting, t)
		}
	}
	s.mu.Unlock()
}

func (s *serverStats) tubeWaiting(tube string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tubesWaiting[tube]
}
