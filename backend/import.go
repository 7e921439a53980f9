package backend

import "time"

// ImportJob is one job to import (Admin.Import): its id, state, priority, TTR, body, remaining
// delay, counters and age at its source.
//
// Exactly once: each ImportJob carries a Key naming the job at its source. A store records the
// key atomically with the job it stores and keeps the record after the job is gone, so a mover
// that crashed after the import but before deleting the job at its source recognises it on its
// next run (AlreadyImported) instead of storing it twice.
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
