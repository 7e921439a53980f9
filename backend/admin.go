package backend

import (
	"context"
	"errors"
)

// The optional interfaces of this file are what a console needs and the protocol lacks: the
// protocol can peek one job per state, so consoles walk ids, and "clear a tube" or "move its
// jobs" become loops of reserve/put/delete. A store that keeps its own jobs can list and act on
// them directly. Every call is bounded (MaxListLimit, MaxBulkLimit), so that a caller going
// through a million-job tube holds the store only briefly at a time.

// MaxListLimit is the most jobs one ListJobs call returns.
const MaxListLimit = 1000

// MaxBulkLimit is the most jobs one DeleteJobs or MoveJobs call acts on.
const MaxBulkLimit = 1000

// ErrBadCursor: a ListParams.After that no ListJobs of this state handed out.
var ErrBadCursor = errors.New("backend: bad cursor")

// JobLister lists a tube's jobs in one state, in the state's own order: ready by (priority,
// id) — the order reserves take them —, delayed by (due time, id), buried oldest first (the
// order kick takes them), reserved by (deadline, id). Pages follow each other through a cursor;
// jobs that change state or priority between two pages may be missed or seen twice, as in any
// keyset paging of a live set.
type JobLister interface {
	// ListJobs returns up to p.Limit jobs following p.After. ErrNotFound if the tube does not
	// exist; ErrBadCursor if p.After is not a cursor of this state.
	ListJobs(ctx context.Context, p ListParams) (*JobPage, error)
}

// ListParams are the arguments of JobLister.ListJobs.
type ListParams struct {
	Tube  string
	State State
	// After is "" for the first page, else a JobPage.Next of the same tube and state.
	After string
	// Limit is 1..MaxListLimit.
	Limit int
	// BodyBytes is how much of each body to return: a preview, so that a page stays small.
	BodyBytes int
}

// ListedJob is one job of a page: its stats-job (File zero) and the start of its body.
type ListedJob struct {
	JobStats
	BodySize int
	Body     []byte // the first ListParams.BodyBytes bytes at most
}

// JobPage is one page of ListJobs.
type JobPage struct {
	Jobs []ListedJob
	// Next is the cursor after the last job; "" when this page is the state's last.
	Next string
}

// BulkEditor deletes and moves many jobs of a tube in one state, in that state's order (see
// JobLister), up to limit (1..MaxBulkLimit) per call: callers loop (DeleteAll, MoveAll), and
// other clients are served between calls. State is Ready, Delayed or Buried: reserved jobs stay
// with their holders.
type BulkEditor interface {
	// DeleteJobs deletes up to limit jobs of tube in state and returns how many. A missing
	// tube deletes none. Each deletion counts in the tube's cmd-delete, as delete does.
	DeleteJobs(ctx context.Context, tube string, state State, limit int) (int, error)

	// MoveJobs moves up to limit jobs of tube from in state to tube to (created if need be) and
	// returns how many. A moved job keeps its id, priority, state, due time and counters; ready
	// ones may be handed to reserves waiting on to. A missing from moves none; from == to moves
	// none.
	MoveJobs(ctx context.Context, from, to string, state State, limit int) (int, error)
}

// DeleteAll deletes every job of tube in state, batch jobs per call, and returns how many.
// Jobs added meanwhile may be deleted too; it stops once a call deletes none.
func DeleteAll(ctx context.Context, b BulkEditor, tube string, state State, batch int) (int, error) {
	return repeat(ctx, batch, func(n int) (int, error) { return b.DeleteJobs(ctx, tube, state, n) })
}

// MoveAll moves every job of from in state to to, batch jobs per call, and returns how many.
func MoveAll(ctx context.Context, b BulkEditor, from, to string, state State, batch int) (int, error) {
	return repeat(ctx, batch, func(n int) (int, error) { return b.MoveJobs(ctx, from, to, state, n) })
}

func repeat(ctx context.Context, batch int, call func(int) (int, error)) (int, error) {
	batch = min(max(batch, 1), MaxBulkLimit)
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := call(batch)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}
