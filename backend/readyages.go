package backend

import (
	"context"
	"time"
)

// ReadyAger tells how long the job a reserve would take next from each tube has been ready: a
// queue's latency, which keeps growing while no worker takes anything (the time ready of the
// jobs reserved is measured only when a reserve takes one). With one priority in a tube, that
// job is its oldest ready job. Every backend of this project has it.
type ReadyAger interface {
	// ReadyAges returns, for each of tubes, how long its next ready job (as PeekState Ready
	// finds it, due transitions applied) has been ready, by the store's clock. A tube that does
	// not exist or has no ready job is left out, as is one whose next job's ready time the store
	// does not know (made ready by an older version).
	ReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error)
}
