package gateway

import (
	"fmt"
	"os"
	"time"

	"github.com/beangate/beangate/backend"
)

// Version is the beanstalkd version beangate presents itself as: the protocol it speaks.
const Version = "1.13"

// binlogMaxSize is beanstalkd's default -s, printed even without a binlog.
const binlogMaxSize = 10485760

// host describes this machine for stats; read once.
type host struct {
	pid      int
	hostname string
	os       string
	platform string
}

func readHost() host {
	h := host{pid: os.Getpid()}
	h.hostname, _ = os.Hostname()
	h.os, h.platform = unameVersionMachine()
	return h
}

// statsYAML renders the stats command: the store's queue figures merged with the command and
// connection figures st this process counted (those of the asking connection's tenant), in
// beanstalkd's key order.
func (s *Server) statsYAML(q *backend.Stats, st *serverStats) []byte {
	y := newYAML().
		uint("current-jobs-urgent", q.UrgentJobs).
		uint("current-jobs-ready", q.ReadyJobs).
		uint("current-jobs-reserved", q.ReservedJobs).
		uint("current-jobs-delayed", q.DelayedJobs).
		uint("current-jobs-buried", q.BuriedJobs)
	for c := cmd(0); c < printedCmds; c++ {
		y = y.uint(cmdStatNames[c], st.cmds[c].Load())
	}
	utime, stime := rusage()
	maxSize := uint64(binlogMaxSize)
	if q.Binlog.MaxSize > 0 {
		maxSize = uint64(q.Binlog.MaxSize)
	}
	y = y.
		uint("job-timeouts", q.JobTimeouts).
		uint("total-jobs", q.TotalJobs).
		uint("max-job-size", uint64(s.cfg.MaxJobSize)).
		uint("current-tubes", q.Tubes).
		int("current-connections", st.connections.Load()).
		int("current-producers", st.producers.Load()).
		int("current-workers", st.workers.Load()).
		int("current-waiting", st.waiting.Load()).
		uint("total-connections", st.totalConnections.Load()).
		int("pid", int64(s.host.pid)).
		quoted("version", s.version()).
		plain("rusage-utime", formatRusage(utime)).
		plain("rusage-stime", formatRusage(stime)).
		seconds("uptime", time.Since(s.started)).
		uint("binlog-oldest-index", q.Binlog.OldestIndex).
		uint("binlog-current-index", q.Binlog.CurrentIndex).
		uint("binlog-records-migrated", q.Binlog.RecordsMigrated).
		uint("binlog-records-written", q.Binlog.RecordsWritten).
		uint("binlog-max-size", maxSize)
	if q.Binlog.CurrentIndex > 0 {
		// Not beanstalkd's: failed binlog writes, fsyncs and reservations (each also logged).
		y = y.uint("binlog-write-errors", q.Binlog.WriteErrors)
	}
	return y.
		bool("draining", s.Draining()).
		plain("id", s.sessions.Process()).
		name("hostname", s.host.hostname, s.v112).
		name("os", s.host.os, s.v112).
		name("platform", s.host.platform, s.v112)
}

func formatRusage(d time.Duration) string {
	us := d.Microseconds()
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}
