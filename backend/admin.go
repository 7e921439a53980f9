package backend

import (
	"context"
	"errors"
	"time"
)

// Admin is what an operator's tools ask of a store beyond the protocol. The protocol can peek
// one job per state, so consoles walk ids, and "clear a tube" or "move its jobs" become loops of
// reserve/put/delete; a store that keeps its own jobs lists and acts on them directly. Every
// listing and bulk call is bounded (MaxListLimit, MaxBulkLimit), so that a caller going through
// a million-job tube holds the store only briefly at a time. Backend embeds Admin: every store
// implements it.
type Admin interface {
	Policies
	Histories
	Schedules

	// ListJobs lists a tube's jobs in one state, in the state's own order: ready by (priority,
	// id) — the order reserves take them —, delayed by (due time, id), buried oldest first (the
	// order kick takes them), reserved by (deadline, id). It returns up to p.Limit jobs
	// following p.After; pages follow each other through a cursor, and jobs that change state
	// or priority between two pages may be missed or seen twice, as in any keyset paging of a
	// live set. ErrNotFound if the tube does not exist; ErrBadCursor if p.After is not a cursor
	// of this state.
	ListJobs(ctx context.Context, p ListParams) (*JobPage, error)

	// DeleteJobs deletes up to limit (1..MaxBulkLimit) jobs of tube in state, in that state's
	// order (see ListJobs), and returns how many: callers loop (DeleteAll), and other clients
	// are served between calls. State is Ready, Delayed or Buried: reserved jobs stay with
	// their holders. A missing tube deletes none. Each deletion counts in the tube's
	// cmd-delete, as delete does.
	DeleteJobs(ctx context.Context, tube string, state State, limit int) (int, error)

	// MoveJobs moves up to limit jobs of tube from in state to tube to (created if need be), as
	// DeleteJobs picks them, and returns how many. A moved job keeps its id, priority, state,
	// due time and counters; ready ones may be handed to reserves waiting on to. A missing from
	// moves none; from == to moves none.
	MoveJobs(ctx context.Context, from, to string, state State, limit int) (int, error)

	// JobHolder returns the session holding job id reserved now, "" if the job is not
	// reserved; ErrNotFound if there is no such job. The session's Process() names the gateway
	// process it belongs to.
	JobHolder(ctx context.Context, id uint64) (SessionID, error)

	// ReadyAges returns, for each of tubes, how long its next ready job (as PeekState Ready
	// finds it, due transitions applied) has been ready, by the store's clock: a queue's
	// latency, which keeps growing while no worker takes anything (the time ready of the jobs
	// reserved is measured only when a reserve takes one). With one priority in a tube, that
	// job is its oldest ready job. A tube that does not exist or has no ready job is left out,
	// as is one whose next job's ready time the store does not know (made ready by an older
	// version).
	ReadyAges(ctx context.Context, tubes []string) (map[string]time.Duration, error)

	// Import stores jobs taken from another store with their identity (beangate migrate), in
	// order, exactly once: see ImportJob. A job whose Key the store has imported before is
	// skipped (AlreadyImported, with the id it was given then). Otherwise it keeps its ID when
	// the store has no job with that id (IDKept) and gets a fresh id when it has (IDChanged);
	// either way the store's id sequence moves past every id it holds, so later puts never
	// collide. Buried jobs go to the end of their tube's buried list in the order given. Each
	// job is stored together with its key record, or neither is; on error, any prefix of jobs
	// may have been stored (with their key records).
	Import(ctx context.Context, jobs []ImportJob) ([]Imported, error)

	// Ping reports whether the store answers now, cheaply, for readiness checks.
	Ping(ctx context.Context) error

	// BinlogFigures reports the store's binlog figures now, for the metrics; ok is false when
	// the store keeps no binlog.
	BinlogFigures() (f BinlogFigures, ok bool)

	// ObserveBinlogSyncs has f called with the duration of every fsync round of the binlog
	// from now on (failed ones included); nothing happens without a binlog.
	ObserveBinlogSyncs(f func(time.Duration))
}

// MaxListLimit is the most jobs one ListJobs call returns.
const MaxListLimit = 1000

// MaxBulkLimit is the most jobs one DeleteJobs or MoveJobs call acts on.
const MaxBulkLimit = 1000

// ErrBadCursor: a ListParams.After that no ListJobs of this state handed out.
var ErrBadCursor = errors.New("backend: bad cursor")

// ListParams are the arguments of Admin.ListJobs.
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

// DeleteAll deletes every job of tube in state, batch jobs per call, and returns how many.
// Jobs added meanwhile may be deleted too; it stops once a call deletes none.
func DeleteAll(ctx context.Context, b Admin, tube string, state State, batch int) (int, error) {
	return repeat(ctx, batch, func(n int) (int, error) { return b.DeleteJobs(ctx, tube, state, n) })
}

// MoveAll moves every job of from in state to to, batch jobs per call, and returns how many.
func MoveAll(ctx context.Context, b Admin, from, to string, state State, batch int) (int, error) {
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
