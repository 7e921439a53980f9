package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend"
)

// importChunk is how many jobs one import transaction carries.
const importChunk = 5000

// Import stores jobs with their identity, each with its key record, in transactions of
// importChunk jobs (sql/import*.sql): one round trip finds the keys seen before and the ids
// taken, one moves the sequence past the kept ids, one hands out fresh ids, one inserts the jobs, their tubes'
// counts and the keys as arrays.
func (b *Backend) Import(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, error) {
	out := make([]backend.Imported, 0, len(jobs))
	for start := 0; start < len(jobs); start += importChunk {
		chunk := jobs[start:min(start+importChunk, len(jobs))]
		var res []backend.Imported
		var woken map[string]int
		err := b.run(ctx, "import", func(ctx context.Context) error {
			var err error
			res, woken, err = b.importChunk(ctx, chunk)
			return err
		})
		if err != nil {
			return out, err
		}
		for t, n := range woken {
			b.waiters.wake(t, n)
		}
		out = append(out, res...)
	}
	if b.policiesActive() {
		b.tickAt(time.Time{}) // the imported jobs' expiry, if any, is the tick's to find
	}
	return out, nil
}

// importChunk is one import transaction.
func (b *Backend) importChunk(ctx context.Context, jobs []backend.ImportJob) ([]backend.Imported, map[string]int, error) {
	out := make([]backend.Imported, len(jobs))
	woken := map[string]int{}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		keys := make([]string, len(jobs))
		ids := make([]int64, len(jobs))
		for i, j := range jobs {
			keys[i], ids[i] = j.Key, int64(j.ID)
		}
		seen, taken := map[string]int64{}, map[int64]bool{}
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("import_seen"), keys).Query(func(rows pgx.Rows) error {
			var key string
			var id int64
			_, err := pgx.ForEachRow(rows, []any{&key, &id}, func() error { seen[key] = id; return nil })
			return err
		})
		bt.Queue(b.st.get("import_taken"), ids).Query(func(rows pgx.Rows) error {
			var id int64
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error { taken[id] = true; return nil })
			return err
		})
		if err := tx.SendBatch(ctx, bt).Close(); err != nil {
			return err
		}
		// Decide each job's fate; a key twice in the call is stored once.
		var store []int // indexes of jobs to store
		var fresh []int // of those, the ones needing a fresh id
		var maxKept int64
		first := map[string]int{}
		for i, j := range jobs {
			if id, ok := seen[j.Key]; ok {
				out[i] = backend.Imported{ID: uint64(id), Outcome: backend.AlreadyImported}
				continue
			}
			if f, ok := first[j.Key]; ok {
				out[i] = backend.Imported{Outcome: backend.AlreadyImported, ID: uint64(f)} // f: index, fixed below
				continue
			}
			first[j.Key] = i
			store = append(store, i)
			if j.ID == 0 || taken[int64(j.ID)] {
				fresh = append(fresh, i)
				continue
			}
			taken[int64(j.ID)] = true
			out[i] = backend.Imported{ID: j.ID, Outcome: backend.IDKept}
			maxKept = max(maxKept, int64(j.ID))
		}
		if maxKept > 0 {
			if _, err := tx.Exec(ctx, b.st.get("import_move_ids"), maxKept); err != nil {
				return err
			}
		}
		if len(fresh) > 0 {
			rows, err := tx.Query(ctx, b.st.get("import_ids"), len(fresh))
			if err != nil {
				return err
			}
			next, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return err
			}
			for k, i := range fresh {
				out[i] = backend.Imported{ID: uint64(next[k]), Outcome: backend.IDChanged}
			}
		}
		for i, j := range jobs {
			if f, ok := first[j.Key]; ok && f != i && out[i].Outcome == backend.AlreadyImported && seen[j.Key] == 0 {
				out[i].ID = out[f].ID
			}
		}
		if len(store) == 0 {
			return nil
		}
		a := newImportArrays(len(store))
		for _, i := range store {
			a.add(&jobs[i], out[i].ID)
		}
		rows, err := tx.Query(ctx, b.stmt("import"), b.now(), a.keys, a.ids, a.tubes, a.states, a.prios,
			a.ttrs, a.delays, a.lefts, a.ages, a.reserves, a.timeouts, a.releases, a.buries, a.kicks, a.bodies)
		if err != nil {
			return err
		}
		var tube string
		var n int
		_, err = pgx.ForEachRow(rows, []any{nil, &tube, &n}, func() error { woken[tube] = n; return nil })
		return err
	})
	return out, woken, err
}

// importArrays are the columns of sql/import.sql.
type importArrays struct {
	keys                                        []string
	ids, prios, ttrs, delays, lefts, ages       []int64
	tubes                                       []string
	states                                      []int16
	reserves, timeouts, releases, buries, kicks []int32
	bodies                                      [][]byte
}

func newImportArrays(n int) *importArrays {
	return &importArrays{
		keys: make([]string, 0, n), ids: make([]int64, 0, n), tubes: make([]string, 0, n), states: make([]int16, 0, n),
		prios: make([]int64, 0, n), ttrs: make([]int64, 0, n), delays: make([]int64, 0, n), lefts: make([]int64, 0, n),
		ages: make([]int64, 0, n), reserves: make([]int32, 0, n), timeouts: make([]int32, 0, n),
		releases: make([]int32, 0, n), buries: make([]int32, 0, n), kicks: make([]int32, 0, n), bodies: make([][]byte, 0, n),
	}
}

func (a *importArrays) add(j *backend.ImportJob, id uint64) {
	state := int16(backend.Ready)
	switch {
	case j.State == backend.Buried:
		state = int16(backend.Buried)
	case j.State == backend.Delayed && j.TimeLeft > 0:
		state = int16(backend.Delayed)
	}
	body := j.Body
	if body == nil {
		body = []byte{}
	}
	a.keys, a.ids, a.tubes, a.states = append(a.keys, j.Key), append(a.ids, int64(id)), append(a.tubes, j.Tube), append(a.states, state)
	a.prios, a.ttrs, a.delays = append(a.prios, int64(j.Priority)), append(a.ttrs, j.TTR.Microseconds()), append(a.delays, j.Delay.Microseconds())
	a.lefts, a.ages = append(a.lefts, j.TimeLeft.Microseconds()), append(a.ages, j.Age.Microseconds())
	a.reserves, a.timeouts, a.releases = append(a.reserves, int32(j.Reserves)), append(a.timeouts, int32(j.Timeouts)), append(a.releases, int32(j.Releases))
	a.buries, a.kicks, a.bodies = append(a.buries, int32(j.Buries)), append(a.kicks, int32(j.Kicks)), append(a.bodies, body)
}
