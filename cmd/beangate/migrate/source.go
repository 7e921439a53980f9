// Package migrate moves jobs off a beanstalkd — a running one over the protocol, or a stopped
// one's binlog directory — into a beangate store, exactly once: each job is imported with a key
// naming it at its source (the store's Import records it atomically with the job), and deleted at
// the source only after the destination has committed it, so a mover killed at any point and
// run again skips what it had imported and deletes it then.
package migrate

import (
	"context"
	"path"
	"time"

	"github.com/beangate/beangate/backend"
)

// Source is where jobs come from.
type Source interface {
	// Name is the source's name in import keys and reports.
	Name() string
	// Plan counts the source's jobs per tube and state, for --dry-run and the progress total.
	Plan(ctx context.Context) ([]TubePlan, error)
	// Next returns up to max jobs to import; nil, errDone when there are none left (with
	// follow, it waits for more until ctx ends).
	Next(ctx context.Context, max int) ([]backend.ImportJob, error)
	// Done is told the destination has committed jobs (as Next returned them); an online source
	// deletes them. It reports the jobs it could not delete.
	Done(ctx context.Context, jobs []backend.ImportJob) (lost int, err error)
	// Deletes reports whether Done deletes at the source (a running server) or the source is
	// left as it was (a binlog directory).
	Deletes() bool
	// Pauses are the source's paused tubes and their remaining pause.
	Pauses(ctx context.Context) (map[string]time.Duration, error)
	// Notes are what the source could not move and why, for the report.
	Notes() []string
	// Version is the server's beanstalkd version from stats ("" when the source cannot tell).
	Version() string
	// Lookup returns those of ids that the source holds in the tubes it moves (for --dry-run's
	// id collisions).
	Lookup(ctx context.Context, ids []uint64) ([]JobRef, error)
	// Left names the jobs still at the source once a run ends (stopped: by a signal), each with
	// why it is there; nil when the source is left as it was anyway (a binlog directory).
	Left(ctx context.Context, stopped bool) (*Leftovers, error)
	// OnWait is told what Next waits for while it has nothing to return ("" once it has).
	OnWait(func(what string))
	Close() error
}

// JobRef names one job: where it is and in what state, and for a job left at the source why.
type JobRef struct {
	ID       uint64
	Tube     string
	State    string        // ready, delayed, buried, reserved
	TimeLeft time.Duration // delayed: until ready; reserved: until its TTR runs out
	Why      string
}

// Leftovers are the jobs a run left at the source.
type Leftovers struct {
	// Count is the jobs in the moved tubes; Jobs names them, or as many as maxNamed and the
	// id scan found.
	Count int
	Jobs  []JobRef
	// Scanned is the id range searched for them.
	Scanned [2]uint64
	// Unselected are the tubes --tubes left out, with their jobs.
	Unselected []TubeCount
}

// TubeCount is a tube and its jobs.
type TubeCount struct {
	Tube string
	Jobs uint64
}

// TubePlan is what one tube holds.
type TubePlan struct {
	Tube                             string
	Ready, Delayed, Buried, Reserved uint64
	Paused                           time.Duration
}

// matcher is --tubes: a glob (path.Match syntax) a tube's name must match; "" matches all.
type matcher string

func (m matcher) match(tube string) bool {
	if m == "" {
		return true
	}
	ok, err := path.Match(string(m), tube)
	return err == nil && ok
}
