package postgres

import (
	"context"
	"math"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// An op is one put, delete or reserve attempt waiting for its batch. A batch runs as one
// implicit transaction in one round trip: put.sql, then delete.sql, then one reserve_many per
// watch list. Puts and deletes so share one WAL flush, and update the hot tube and counter rows
// once per batch instead of queueing on each other's row locks through every commit; reserves
// come last, so they can take the jobs put in the same transaction. A batch of reserves alone
// commits without waiting for the disk (async_commit.sql); one with puts or deletes is durable as
// a whole, the reservations it made included. Which ops share a batch: see New.
type op struct {
	put     *putItem
	del     *deleteItem
	reserve *reserveItem
}

type putItem struct {
	tube     string
	priority uint32
	delayUS  int64
	ttrUS    int64
	body     []byte
}

type deleteItem struct {
	session backend.SessionID
	id      uint64
}

// opResult is a put's id, whether a delete found its job, or a reserve attempt's answer.
type opResult struct {
	id       uint64
	deleted  bool
	reserved reserveResult
}

// Put stores a job; concurrent puts share one INSERT and one commit (see put.sql).
func (b *Backend) Put(ctx context.Context, p backend.PutParams) (uint64, error) {
	body := p.Body
	if body == nil {
		body = []byte{} // bodies are NOT NULL; an empty job is valid
	}
	res, err := b.writes.do(ctx, op{put: &putItem{
		tube: p.Tube, priority: p.Priority, delayUS: p.Delay.Microseconds(), ttrUS: p.TTR.Microseconds(), body: body,
	}})
	if err != nil {
		return 0, callErr("put", err)
	}
	if p.Delay <= 0 {
		b.waiters.wake(p.Tube, 1)
	}
	return res.id, nil
}

// Delete removes a job; concurrent deletes share one DELETE and one commit (see delete.sql).
func (b *Backend) Delete(ctx context.Context, s backend.SessionID, id uint64) error {
	if id > math.MaxInt64 {
		return backend.ErrNotFound
	}
	res, err := b.writes.do(ctx, op{del: &deleteItem{session: s, id: id}})
	if err != nil {
		return callErr("delete", err)
	}
	if !res.deleted {
		return backend.ErrNotFound
	}
	return nil
}

// execOps runs a batch of puts, deletes and reserve attempts in one transaction.
func (b *Backend) execOps(ctx context.Context, items []op) ([]opResult, error) {
	var (
		putAt, delAt, reserveAt []int // index in items of each put, delete, reserve
		tubes                   []string
		prios, delays, ttrs     []int64
		bodies                  [][]byte
		delIDs                  []int64
		delSessions             []string
		reserves                []reserveItem
	)
	for i, it := range items {
		switch {
		case it.put != nil:
			p := it.put
			putAt = append(putAt, i)
			tubes, prios, delays, ttrs = append(tubes, p.tube), append(prios, int64(p.priority)), append(delays, p.delayUS), append(ttrs, p.ttrUS)
			bodies = append(bodies, p.body)
		case it.del != nil:
			delAt = append(delAt, i)
			delIDs, delSessions = append(delIDs, int64(it.del.id)), append(delSessions, string(it.del.session))
		default:
			reserveAt = append(reserveAt, i)
			reserves = append(reserves, *it.reserve)
		}
	}
	// A deleted job is reported as (id, session): the pair finds its caller.
	type deletion struct {
		id      int64
		session string
	}
	delIndex := make(map[deletion]int, len(delAt))
	for k, i := range delAt {
		delIndex[deletion{delIDs[k], delSessions[k]}] = i
	}
	rb := newReserveBatch(reserves)
	res := make([]opResult, len(items))
	var unreferenced []string
	own := b.leases.list() // put.sql announces ready jobs only to other gateway processes
	now := b.now()         // one time for the whole batch, as for a reserve attempt
	name := "put/delete"
	if len(putAt)+len(delAt) == 0 {
		name = "reserve"
	}
	err := b.run(ctx, name, func(ctx context.Context) error {
		clear(res)
		unreferenced = unreferenced[:0]
		bt := &pgx.Batch{}
		if len(putAt)+len(delAt) == 0 {
			bt.Queue(b.st.get("async_commit"))
		}
		if len(putAt) > 0 {
			bt.Queue(b.st.get("put"), now, tubes, prios, delays, ttrs, bodies, own).Query(func(rows pgx.Rows) error {
				var ord, id int64
				_, err := pgx.ForEachRow(rows, []any{&ord, &id}, func() error {
					res[putAt[ord-1]].id = uint64(id)
					return nil
				})
				return err
			})
		}
		if len(delAt) > 0 {
			// No promote step: delete.sql counts an expired reservation itself.
			bt.Queue(b.st.get("delete"), now, delIDs, delSessions).Query(func(rows pgx.Rows) error {
				var id *int64
				var name string
				_, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
					if id == nil {
						unreferenced = append(unreferenced, name)
					} else if i, ok := delIndex[deletion{*id, name}]; ok {
						res[i].deleted = true
					}
					return nil
				})
				return err
			})
		}
		rb.queue(b, bt)
		return b.batch(ctx, bt)
	})
	if err == nil {
		err = rb.err()
	}
	if err == nil {
		for k, i := range reserveAt {
			res[i].reserved = rb.res[k]
		}
	}
	if err == nil && len(unreferenced) > 0 {
		err = b.gcTubes(ctx, unreferenced)
	}
	return res, err
}

// gcTubes deletes the given tubes if they are still unreferenced.
func (b *Backend) gcTubes(ctx context.Context, names []string) error {
	return b.run(ctx, "gc tubes", func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, b.st.get("gc_tubes"), names)
		return err
	})
}
