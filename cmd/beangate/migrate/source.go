// Package migrate moves jobs off a beanstalkd — a running one over the protocol, or a stopped
// one's binlog directory — into a beangate store, exactly once: each job is imported with a key
// naming it at its source (backend.Importer records it atomically with the job), and deleted at
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
	// Pauses are the source's paused tubes and their remaining pause.
	Pauses(ctx context.Context) (map[string]time.Duration, error)
	// Notes are what the source could not move and why, for the report.
	Notes() []string
	Close() error
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
