package backend

import "context"

// HolderTeller tells which session holds a reserved job, for an operator's console: the
// session's Process() names the gateway process it belongs to. Optional; every backend has it.
type HolderTeller interface {
	// JobHolder returns the session holding job id reserved now, "" if the job is not reserved;
	// ErrNotFound if there is no such job.
	JobHolder(ctx context.Context, id uint64) (SessionID, error)
}
