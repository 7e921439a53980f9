package backend

import (
	"context"
	"time"
)

// Importer is an optional interface of a Backend that can take in jobs from another store with
// their identity (beangate migrate): id, state, priority, TTR, body, remaining delay, counters
// and age. It is implemented by the beangate stores (memory, with or without a binlog; Redis;
// PostgreSQL).
//
// Exactly once: each ImportJob carries a Key naming the job at its source. A store records the
// key atomically with the job it stores and keeps the record after the job is gone, so a mover
// that crashed after the import but before deleting the job at its source recognises it on its
// next run (AlreadyImported) instead of storing it twice.
type Importer interface {
	// Import stores jobs in order. A job whose Key the store has imported before is skipped
	// (AlreadyImported, with the id it was given then). Otherwise it keeps its ID when the store
	// has no job with that id (IDKept) and gets a fresh id when it has (IDChanged); either way the
	// store's id sequence moves past every id it holds, so later puts never collide. Buried jobs
	// go to the end of their tube's buried list in the order given. Each job is stored together
	// with its key record, or neither is; on error, any prefix of jobs may have been stored
	// (with their key records).
	Import(ctx context.Context, jobs []ImportJob) ([]Imported, error)
}

// ImportJob is one job to import.
type ImportJob struct {
	Key      string // the job's name at its source, e.g. "beanstalk://old:11300#42"; required
	ID       uint64 // the id to keep if free; 0 asks for a fresh one
	Tube     string
	State    State // Ready, Delayed or Buried; Reserved is stored as Ready (its holder is gone)
	Priority uint32
	TTR      time.Duration // >= 1s
	Delay    time.Duration // as last given by put or release (stats-job's delay)
	TimeLeft time.Duration // Delayed: until it becomes ready; <= 0 makes it ready now
	Age      time.Duration // since its put at the source
	Reserves uint32
	Timeouts uint32
	Releases uint32
	Buries   uint32
	Kicks    uint32
	Body     []byte
}

// ImportOutcome says what Import did with one job.
type ImportOutcome int

// The outcomes of an import.
const (
	IDKept          ImportOutcome = iota + 1 // stored under its own id
	IDChanged                                // stored under a fresh id: its own was taken
	AlreadyImported                          // its key was imported before: nothing stored
)

func (o ImportOutcome) String() string {
	switch o {
	case IDKept:
		return "id kept"
	case IDChanged:
		return "id changed"
	case AlreadyImported:
		return "already imported"
	}
	return "unknown"
}

// Imported is the outcome of one ImportJob: the id the job has in the store, and how.
type Imported struct {
	ID      uint64
	Outcome ImportOutcome
}
