package postgres

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// A write is one put or one delete waiting for group commit. The puts and deletes that arrive
// together run as one implicit transaction (put.sql then delete.sql, one round trip), so they
// share one WAL flush, and they update the hot tube and counter rows once per batch instead of
// queueing on each other's row locks through every commit.
type write struct {
	put *putItem
	del *deleteItem
}

type putItem struct {
	session  backend.SessionID // who puts it (the job's history names it)
	tube     string
	priority uint32
	delayUS  int64
	ttrUS    int64
	body     []byte
	to       *waiter // a local reserve waiting on tube, claimed for this job (see put.sql)
}

type deleteItem struct {
	session backend.SessionID
	id      uint64
}

// deletion identifies a delete in a batch.
type deletion struct {
	id      int64
	session string
}

// writeResult is a put's id and whether the job is delayed and due first in its tube, or went to
// the waiting reserve its put claimed (or, under a unique policy, whether the id is an existing
// job's), or whether a delete found its job.
type writeResult struct {
	id      uint64
	heads   bool
	handed  bool
	due     *time.Time // handed: the reservation's deadline
	deduped bool
	deleted bool
}

// Put stores a job; concurrent puts share one INSERT and one commit (see put.sql).
func (b *Backend) Put(ctx context.Context, p backend.PutParams) (uint64, error) {
	if err := b.tickPolicies(ctx, false); err != nil {
		return 0, err
	}
	item := b.newPutItem(p)
	res, err := b.writes.Do(ctx, write{put: item})
	if err != nil {
		b.hand(item, res, false)
		return 0, opErr("put", err)
	}
	b.putDone(p.Tube, res)
	if !b.hand(item, res, true) && (p.Delay <= 0 || res.heads) { // a waiter times its next try by the earliest due time it saw
		b.waiters.wake(p.Tube, 1)
	}
	return res.id, nil
}

// PutBatch stores jobs as consecutive Puts would; they share one INSERT and one commit (or a
// few, when other writes are queued ahead of them).
func (b *Backend) PutBatch(ctx context.Context, ps []backend.PutParams) []backend.PutResult {
	if err := b.tickPolicies(ctx, false); err != nil {
		out := make([]backend.PutResult, len(ps))
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	items := make([]write, len(ps))
	for i, p := range ps {
		items[i] = write{put: b.newPutItem(p)}
	}
	res := make([]writeResult, len(ps))
	errs := make([]error, len(ps))
	b.writes.DoAll(ctx, items, res, errs)
	out := make([]backend.PutResult, len(ps))
	woken := map[string]int{}
	for i, p := range ps {
		if errs[i] != nil {
			b.hand(items[i].put, res[i], false)
			out[i].Err = opErr("put", errs[i])
			continue
		}
		out[i].ID = res[i].id
		b.putDone(p.Tube, res[i])
		if !b.hand(items[i].put, res[i], true) && (p.Delay <= 0 || res[i].heads) {
			woken[p.Tube]++
		}
	}
	for tube, n := range woken {
		b.waiters.wake(tube, n)
	}
	return out
}

// newPutItem prepares a put, claiming for a ready job a local reserve waiting on its tube (not
// under policies, whose caps and rates a reserve statement applies).
func (b *Backend) newPutItem(p backend.PutParams) *putItem {
	body := p.Body
	if body == nil {
		body = []byte{} // bodies are NOT NULL; an empty job is valid
	}
	it := &putItem{
		session: p.Session, tube: p.Tube, priority: p.Priority, delayUS: p.Delay.Microseconds(), ttrUS: p.TTR.Microseconds(), body: body,
	}
	if p.Delay <= 0 && !b.policiesActive() {
		it.to = b.waiters.claim(p.Tube)
		if it.to != nil {
			// Until the put answers: a server lost meanwhile may have committed the job reserved
			// for that session, which its reserve would then not learn of (durability.go).
			b.undurable.begin(it.to.session)
		}
	}
	return it
}

// hand answers the reserve a put claimed: with the job if the put reserved it for that reserve
// (reporting true), else with nothing, and it tries again as if woken.
func (b *Backend) hand(it *putItem, res writeResult, ok bool) bool {
	if it.to == nil {
		return false
	}
	b.undurable.endOne(it.to.session, false) // answered, and a handed job is as durable as its put
	if !ok || !res.handed {
		b.waiters.madeReady() // before the reserve tries again, which must not take nothing for an answer
		it.to.give(nil)
		return ok // a job made ready: the claimed reserve was woken for it
	}
	if res.due != nil { // put.sql returns it for every handed job
		b.reservedWithoutStatement(it.tube, *res.due)
	} else {
		b.empty.reservedUntil(it.tube, nil)
	}
	// The body is the caller's buffer, which it may reuse once Put returns.
	it.to.give(&backend.Job{ID: res.id, Tube: it.tube, Priority: it.priority, Body: bytes.Clone(it.body), HasReadyFor: true})
	return true
}

// Delete removes a job; concurrent deletes share one DELETE and one commit (see delete.sql).
func (b *Backend) Delete(ctx context.Context, s backend.SessionID, id uint64) error {
	if id > math.MaxInt64 {
		return backend.ErrNotFound
	}
	if err := b.tickPolicies(ctx, false); err != nil {
		return err
	}
	res, err := b.writes.Do(ctx, write{del: &deleteItem{session: s, id: id}})
	if err != nil {
		return opErr("delete", err)
	}
	if !res.deleted {
		return backend.ErrNotFound
	}
	b.empty.gave(string(s), id)
	b.freedSlot("")
	return nil
}

// maxBatch bounds the calls in one write or reserve batch.
const maxBatch = 1000

// execWrites commits a batch of puts and deletes in one transaction. Its error is translated by
// each caller (Put, Delete).
func (b *Backend) execWrites(ctx context.Context, items []write, res []writeResult) error {
	var (
		putAt               []int // index in items of each put
		tubes               []string
		prios, delays, ttrs []int64
		bodies              [][]byte
		hands, watches      []*string // per put: the claimed reserve's session and watched tubes
		producers           []string  // per put: its session
		delIDs              []int64
		delSessions         []string
	)
	// A deleted job comes back as (id, session), which finds its caller: a session deletes a job
	// once per batch (it waits for each reply).
	delAt := map[deletion]int{}
	for i, it := range items {
		if p := it.put; p != nil {
			putAt = append(putAt, i)
			tubes, prios, delays, ttrs = append(tubes, p.tube), append(prios, int64(p.priority)), append(delays, p.delayUS), append(ttrs, p.ttrUS)
			bodies, producers = append(bodies, p.body), append(producers, string(p.session))
			if p.to != nil {
				session, watch := p.to.session, strings.Join(p.to.tubes, " ")
				hands, watches = append(hands, &session), append(watches, &watch)
			} else {
				hands, watches = append(hands, nil), append(watches, nil)
			}
		} else {
			delIDs, delSessions = append(delIDs, int64(it.del.id)), append(delSessions, string(it.del.session))
			delAt[deletion{int64(it.del.id), string(it.del.session)}] = i
		}
	}
	var unreferenced []string
	own := b.leases.list() // put.sql announces ready jobs only to other gateway processes
	now := b.now()         // one time for the whole batch, as for a reserve attempt
	put, policies := b.st.get("put"), b.policiesActive()
	var locks []string
	if policies {
		put = b.variant("put", true)
		locks = b.policyLocks(tubes, func(p backend.Policy) bool { return p.Unique })
	}
	point := b.undurable.take() // a batch that writes flushes the reserves committed before it
	err := b.runBatch(ctx, func(ctx context.Context) error {
		clear(res)
		unreferenced = unreferenced[:0]
		bt := &pgx.Batch{}
		if len(locks) > 0 {
			bt.Queue(b.st.get("lock_policy_tubes"), locks)
		}
		if len(putAt) > 0 && len(delIDs) > 0 {
			bt.Queue(b.st.get("lock_tubes"), tubes, delIDs) // see lock_tubes.sql
		}
		if len(putAt) > 0 {
			args := []any{now, tubes, prios, delays, ttrs, bodies, own, hands, watches}
			if policies {
				args = append(args, producers)
			}
			bt.Queue(put, args...).Query(func(rows pgx.Rows) error {
				var ord, id int64
				var heads, handed, deduped bool
				var due *time.Time
				dest := []any{&ord, &id, &heads, &handed, &due}
				if policies {
					dest = append(dest, &deduped)
				}
				_, err := pgx.ForEachRow(rows, dest, func() error {
					res[putAt[ord-1]] = writeResult{id: uint64(id), heads: heads, handed: handed, due: copyTime(due), deduped: deduped}
					return nil
				})
				return err
			})
		}
		if len(delIDs) > 0 {
			// No promote step: delete.sql counts an expired reservation itself.
			bt.Queue(b.variant("delete", policies), now, delIDs, delSessions).Query(func(rows pgx.Rows) error {
				var id *int64
				var name string
				_, err := pgx.ForEachRow(rows, []any{&id, &name}, func() error {
					if id == nil {
						unreferenced = append(unreferenced, name)
						return nil
					}
					if i, ok := delAt[deletion{*id, name}]; ok {
						res[i].deleted = true
					}
					return nil
				})
				return err
			})
		}
		return b.batch(ctx, bt)
	})
	if err == nil && slices.ContainsFunc(res, func(r writeResult) bool { return r.deleted || r.id != 0 && !r.deduped }) {
		b.undurable.durable(point)
	}
	if err == nil && len(unreferenced) > 0 {
		err = b.gcTubes(ctx, unreferenced)
	}
	return err
}

// gcTubes deletes the given tubes if they are still unreferenced. Its error is its caller's.
func (b *Backend) gcTubes(ctx context.Context, names []string) error {
	return b.attempt(ctx, func(ctx context.Context) error {
		_, err := b.pool.Exec(ctx, b.st.get("gc_tubes"), names)
		return err
	})
}

// putDone follows a put into tube under policies: a duplicate is reported, and a job that will
// expire makes the tick come by its expiry.
func (b *Backend) putDone(tube string, res writeResult) {
	if !b.policiesActive() {
		return
	}
	if res.deduped {
		b.report(backend.PolicyAction{Tube: tube, Policy: backend.PolicyUnique, Action: backend.ActionDedupe, Job: res.id})
		return
	}
	if p, ok := b.policyOf(tube); ok && p.ExpireAfter > 0 {
		b.tickAt(b.localNow().Add(p.ExpireAfter))
	}
}
