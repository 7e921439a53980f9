package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5"
)

// pollInterval bounds how long a waiting reserve trusts hints alone: it tries again at least this
// often, so a lost notification (listener reconnecting) delays it at most this much.
const pollInterval = time.Second

// wakeSlack is added to timers set from database time so that the retry does not land a hair
// before the due moment on the database clock.
const wakeSlack = time.Millisecond

// Reserve reserves the best ready job over p.Tubes, waiting as the contract says.
func (b *Backend) Reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	job, err := b.reserve(ctx, p)
	if job != nil {
		b.empty.took(string(p.Session), job.ID)
	}
	return job, err
}

func (b *Backend) reserve(ctx context.Context, p backend.ReserveParams) (*backend.Job, error) {
	// Registered before the first attempt, so a job made ready during it still wakes us.
	w := b.waiters.add(string(p.Session), p.Tubes)
	gaveUp := false
	defer func() { b.waiters.remove(w, gaveUp) }()

	// The timeout runs from the call, not from the first database answer, so that a clock
	// advanced while the first attempt is in flight is not missed.
	timedOut := make(chan struct{})
	if p.Timeout > 0 {
		timeout := b.clock.AfterFunc(p.Timeout, func() { close(timedOut) })
		defer timeout.Stop()
	}
	// After a wait that ended at a due moment (or a poll), the next attempt promotes first: a
	// delayed job has most likely come due or a reservation run out, and it would otherwise learn
	// that from a first round and need a second (see execReserves). A wake-up by a job made
	// ready needs no promotion: that attempt costs one statement.
	promote := false
	var dueAt any // after a wait that ended at a due moment (real time only): that moment
	for {
		// Read before the attempt: a timeout that fired earlier is answered only after an
		// attempt made at (fake) time past it found nothing, so that a job maturing before the
		// timeout, or a DEADLINE_SOON, still wins when the clock jumps past both.
		expired := isClosed(timedOut)
		if id, ok := w.takeHanded(); ok {
			job, err := b.reserveHanded(ctx, p, id)
			if err != nil || job != nil {
				gaveUp = err != nil
				return job, err
			}
		}
		// One "now" per attempt: what the wait learns is consistent with what the attempt saw.
		// An attempt woken at a due moment is made as of that moment, as beanstalkd serves a
		// waiter when the first of its jobs comes due: a better job due a millisecond later
		// (its timer a hair behind) is not yet a candidate.
		now := b.now()
		if dueAt != nil {
			now = dueAt
		}
		info, known := b.knownEmpty(p)
		if !known {
			var job *backend.Job
			var err error
			if job, info, err = b.tryReserve(ctx, p, now, promote); err != nil || job != nil {
				gaveUp = err != nil
				return job, err
			}
		}
		if info.ownDeadline != nil && !info.now.Before(info.ownDeadline.Add(-backend.DeadlineSoonMargin)) {
			return nil, backend.ErrDeadlineSoon
		}
		if p.Timeout == 0 {
			return nil, backend.ErrTimedOut
		}
		if expired {
			return nil, backend.ErrTimedOut
		}
		woke, err := b.wait(ctx, w, info, timedOut)
		if woke.job != nil {
			return woke.job, nil // reserved for this caller by a put, even if it has given up
		}
		if err != nil {
			gaveUp = true
			return nil, opErr("reserve", err)
		}
		promote, dueAt = !woke.hinted, nil
		if woke.due != nil && b.opts.Clock == nil {
			dueAt = *woke.due
		}
	}
}

// knownEmpty returns what a statement would answer the waiting reserve p, when it is known
// without one (emptyLists). Its waiter is registered before, so a hint from here on wakes it.
func (b *Backend) knownEmpty(p backend.ReserveParams) (waitInfo, bool) {
	if p.Timeout == 0 || b.policiesActive() || !b.empty.free(string(p.Session)) {
		return waitInfo{}, false
	}
	return b.empty.lookup(p.Tubes, b.waiters.generation(), b.localNow())
}

// wakeUp is why a wait ended: a job a put reserved for it, a hint that a job was made ready (a
// put that claimed it and made its job ready after all counts as one), or the due moment it
// waited for (due), or else the poll, the timeout.
type wakeUp struct {
	job    *backend.Job
	gifted bool // the claiming put answered (job, or nil)
	hinted bool
	due    *time.Time
}

// wait blocks until a put's job, a hint, the next due moment, the poll interval, the timeout or
// ctx, and says which. While it waits, a put may claim it (waiters.claim); a claimed wait ends
// with that put's answer, whatever else came first.
func (b *Backend) wait(ctx context.Context, w *waiter, info waitInfo, timedOut <-chan struct{}) (wakeUp, error) {
	b.waiters.setIdle(w)
	woke, err := b.waitIdle(ctx, w, info, timedOut)
	if b.waiters.settle(w) && !woke.gifted {
		return wakeUp{job: <-w.gift, gifted: true, hinted: true}, nil
	}
	return woke, err
}

func (b *Backend) waitIdle(ctx context.Context, w *waiter, info waitInfo, timedOut <-chan struct{}) (wakeUp, error) {
	next := info.nextDue
	if info.ownDeadline != nil {
		soon := info.ownDeadline.Add(-backend.DeadlineSoonMargin)
		if next == nil || soon.Before(*next) {
			next = &soon
		}
	}
	began := b.localNow()
	var dueCh <-chan struct{} // nil (never ready) without a due moment
	var timer backend.Timer
	arm := func() {
		if timer != nil {
			timer.Stop()
		}
		due := make(chan struct{})
		if b.opts.Clock != nil {
			// For the time itself: the clock may have moved since the attempt, and may move again
			// before the timer is set (backend.AfterFuncAt).
			timer = backend.AfterFuncAt(b.clock, *next, func() { close(due) })
		} else {
			// The store's clock now: the attempt's, moved on by the local clock since.
			now := info.now.Add(b.localNow().Sub(began))
			timer = b.clock.AfterFunc(next.Sub(now)+wakeSlack, func() { close(due) })
		}
		dueCh = due
	}
	if next != nil {
		arm()
	}
	b.waiters.timedFor(w, next)
	defer func() {
		b.waiters.timedFor(w, nil) // between waits, every deadline announced is kept for the next
		if timer != nil {
			timer.Stop()
		}
	}()
	poll := time.NewTimer(b.poll)
	defer poll.Stop()
	for {
		select {
		case j := <-w.gift:
			return wakeUp{job: j, gifted: true, hinted: true}, nil
		case <-w.ch:
			return wakeUp{hinted: true}, nil
		case at := <-w.sooner:
			// A reservation of a watched tube made since the attempt runs out earlier.
			if next == nil || at.Before(*next) {
				next = &at
				arm()
				b.waiters.timedFor(w, next)
			}
			continue
		case <-dueCh:
			return wakeUp{due: next}, nil
		case <-timedOut: // the loop's next attempt sees it and answers TIMED_OUT
		case <-poll.C:
		case <-ctx.Done():
			return wakeUp{}, ctx.Err()
		}
		return wakeUp{}, nil
	}
}

// tryReserve reserves a job now if there is one, or says what to wait for. Concurrent attempts
// share a batch (see execReserves).
func (b *Backend) tryReserve(ctx context.Context, p backend.ReserveParams, now any, promote bool) (*backend.Job, waitInfo, error) {
	if err := b.tickPolicies(ctx, false); err != nil {
		return nil, waitInfo{}, err
	}
	gen := b.waiters.generation() // before the statement is sent (emptyLists)
	res, err := b.reserves.Do(ctx, reserveItem{tubes: p.Tubes, session: string(p.Session), now: now, promote: promote})
	if err == nil {
		err = res.err
	}
	if err != nil {
		return nil, waitInfo{}, opErr("reserve", err)
	}
	if res.empty != nil && !b.policiesActive() {
		b.empty.found(p.Tubes, gen, *res.empty, b.localNow())
	}
	if res.job == nil && res.wait.ownDeadline == nil && !res.wait.now.IsZero() {
		b.empty.holdsNone(string(p.Session))
	}
	if res.job != nil {
		b.reserved(res.job.Tube)
		if res.due != nil {
			b.waiters.reservedUntil(res.job.Tube, *res.due)
		}
	}
	for _, t := range res.held {
		b.report(backend.PolicyAction{Tube: t, Policy: b.heldBy(t), Action: backend.ActionDefer})
	}
	return res.job, res.wait, nil
}

// A reserveItem is one reserve attempt waiting for its batch.
type reserveItem struct {
	tubes   []string
	session string
	now     any  // nil, or the injected clock's time
	promote bool // promote due jobs first, without asking (an attempt after a wait)
}

// reserveResult answers an attempt: the job reserved, or, if none, what to wait for.
type reserveResult struct {
	job  *backend.Job
	wait waitInfo
	held []string // tubes a policy held back although they had ready jobs
	err  error    // this attempt's own failure (its batch's second round), the others unaffected
	// empty is what its statement answered a session it had no job for (nil: it served every
	// session): nothing ready is left over the watched tubes (emptyLists).
	empty *waitInfo
	due   *time.Time // with a job: when its reservation runs out
}

// watchList keys dueLists: the tubes alone (an injected clock's time would make every key new).
func (it reserveItem) watchList() string {
	return watchList(it.tubes)
}

// group is what attempts must share to be answered by one statement: the watch list and "now".
func (it reserveItem) group() string {
	key := it.watchList()
	if t, ok := it.now.(time.Time); ok {
		key += "\x00" + t.Format(time.RFC3339Nano)
	}
	return key
}

// execReserves answers a batch of reserve attempts in one round trip and one asynchronous
// commit: a reserve_many statement per distinct watch list, the sessions of a group in the order
// they asked. The statements run one after the other in one transaction, so a later one sees the
// jobs an earlier one reserved and takes others. An attempt that finds nothing learns from the
// same statement what to wait for. The groups whose tubes hold due jobs not yet promoted reserve
// nothing in that round: they get a second one, promote_tubes first (see reserve_many.sql), in a
// transaction of its own, so that a failure there does not undo the first round's reservations
// (its attempts get the error, the others their jobs). A batch promotes first, in its one round,
// as every batch once did, when one of its attempts was made after a wait (most likely woken by
// something coming due) or watches tubes whose last reserve found due jobs (delayed jobs and
// expired reservations keep coming): two rounds would make those later.
func (b *Backend) execReserves(ctx context.Context, items []reserveItem, results []reserveResult) error {
	promoted := slices.ContainsFunc(items, func(it reserveItem) bool { return it.promote || b.dueListed(it) })
	res, promote, n, err := b.reserveRound(ctx, items, promoted)
	if err == nil && promoted {
		b.noteDue(items, n > 0)
	}
	copy(results, res)
	if err != nil || promoted || !slices.Contains(promote, true) {
		return err
	}
	var again []reserveItem
	var at []int
	for i, p := range promote {
		if p {
			again = append(again, items[i])
			at = append(at, i)
		}
	}
	res2, _, n, err := b.reserveRound(ctx, again, true)
	if err == nil {
		b.noteDue(again, n > 0)
	}
	for k, i := range at {
		if err != nil {
			results[i] = reserveResult{err: err}
		} else {
			results[i] = res2[k]
		}
	}
	return nil
}

// maxDueLists bounds Backend.dueLists (watch lists come and go with the clients).
const maxDueLists = 1024

// noteDue remembers whether the watch lists of items had due jobs to promote.
func (b *Backend) noteDue(items []reserveItem, due bool) {
	b.dueMu.Lock()
	defer b.dueMu.Unlock()
	for _, it := range items {
		if !due {
			delete(b.dueLists, it.watchList())
			continue
		}
		if b.dueLists == nil || len(b.dueLists) >= maxDueLists {
			b.dueLists = map[string]struct{}{}
		}
		b.dueLists[it.watchList()] = struct{}{}
	}
}

// dueListed tells whether the watch list of it had due jobs at its last reserve.
func (b *Backend) dueListed(it reserveItem) bool {
	b.dueMu.Lock()
	defer b.dueMu.Unlock()
	_, ok := b.dueLists[it.watchList()]
	return ok
}

// reserveRound runs one round of execReserves: promote_tubes first if promoted, then reserve_many
// per group. promote[i] says that attempt i got nothing because its tubes hold due jobs to
// promote first (never when promoted); n is how many jobs promote_tubes made ready.
func (b *Backend) reserveRound(ctx context.Context, items []reserveItem, promoted bool) (res []reserveResult, promote []bool, n int64, err error) {
	res = make([]reserveResult, len(items))
	promote = make([]bool, len(items))
	answered := make([]bool, len(items))
	type group struct {
		first     int
		sessions  []string
		bySession map[string]int // index in items; sessions are distinct within a group
	}
	var groups []*group
	byKey := map[string]*group{}
	policies := b.policiesActive()
	promoteStmt, reserveStmt := b.variant("promote_tubes", policies), b.variant("reserve_many", policies)
	for i, it := range items {
		k := it.group()
		g := byKey[k]
		if g == nil {
			g = &group{first: i, bySession: map[string]int{}}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.sessions = append(g.sessions, it.session)
		g.bySession[it.session] = i
	}
	// Marked before the batch is sent: a server lost while it is in flight is reported to them.
	sessions := make([]string, len(items))
	for i, it := range items {
		sessions[i] = it.session
	}
	b.undurable.begin(sessions...)
	defer func() { b.undurable.end(sessions, func(i int) bool { return err == nil && res[i].job != nil }) }()
	err = b.runBatch(ctx, func(ctx context.Context) error {
		clear(res)
		clear(promote)
		clear(answered)
		n = 0
		bt := &pgx.Batch{}
		if policies {
			var tubes []string
			for _, it := range items {
				tubes = append(tubes, it.tubes...)
			}
			if locks := b.policyLocks(tubes, func(p backend.Policy) bool { return p.MaxReserved > 0 || p.Rate > 0 }); len(locks) > 0 {
				bt.Queue(b.st.get("lock_policy_tubes"), locks)
			}
		}
		if promoted {
			// Due jobs first, in statements of their own: the reserves' snapshots then see them
			// ready, also those another transaction was promoting (promote_tubes.sql). One
			// statement for every watched tube of the batch, so that the rows it waits for are
			// locked in one id order: a second one, after the first had locked rows and a
			// reserve had taken some, could wait for a row held by a transaction waiting for one
			// of those.
			for _, p := range promotionsOf(items) {
				bt.Queue(promoteStmt, p.now, p.tubes, p.sessions).QueryRow(func(row pgx.Row) error {
					var c int64
					err := row.Scan(&c)
					n += c
					return err
				})
			}
		}
		for _, g := range groups {
			it := items[g.first]
			bt.Queue(reserveStmt, it.now, it.tubes, g.sessions, promoted).Query(func(rows pgx.Rows) error {
				var (
					session string
					id      *int64
					tube    *string
					prio    *int64
					body    []byte
					at      *time.Time
					info    waitInfo
					readyUS *int64
					first   bool
					held    []string
				)
				dest := []any{&session, &id, &tube, &prio, &body, &at, &info.ownDeadline, &info.nextDue, &readyUS, &first}
				if policies {
					dest = append(dest, &held)
				}
				_, err := pgx.ForEachRow(rows, dest, func() error {
					i, ok := g.bySession[session]
					if !ok {
						return fmt.Errorf("reserve_many answered session %q, which did not ask", session)
					}
					answered[i] = true
					if id == nil {
						res[i].held = slices.Clone(held)
					}
					if id != nil {
						res[i].job = withReadyFor(&backend.Job{ID: uint64(*id), Tube: *tube, Priority: uint32(*prio), Body: body}, readyUS)
						res[i].due = copyTime(info.nextDue) // the reservation's deadline
					} else if first {
						promote[i] = true
					} else if at != nil {
						// Copies: the scan targets are reused for the next row.
						res[i].wait = waitInfo{now: *at, ownDeadline: copyTime(info.ownDeadline), nextDue: copyTime(info.nextDue)}
					}
					return nil
				})
				return err
			})
		}
		return b.batch(ctx, bt)
	})
	if err == nil {
		for _, g := range groups {
			shareEmpty(res, g.bySession)
		}
	}
	if err == nil && slices.Contains(answered, false) {
		err = errors.New("a session got neither a job nor what to wait for")
	}
	if err == nil && promoted && slices.Contains(promote, true) {
		err = errors.New("asked to promote again right after promoting")
	}
	return res, promote, n, err
}

// reserveHanded reserves job id, handed to this waiting reserve by a closing session (see
// waiters.handOut), if it is still ready in an unpaused tube the session watches; nil if not.
func (b *Backend) reserveHanded(ctx context.Context, p backend.ReserveParams, id uint64) (*backend.Job, error) {
	if b.policiesActive() {
		// A cap or a rate may hold the job's tube back: the reserve goes on as usual, and
		// takes the job if the policies let it.
		return nil, nil
	}
	var job *backend.Job
	b.undurable.begin(string(p.Session))
	defer func() { b.undurable.endOne(string(p.Session), job != nil) }()
	err := b.run(ctx, "reserve-handed", func(ctx context.Context) error {
		job = nil
		var (
			jid  int64
			tube string
			prio int64
			body []byte
		)
		var readyUS *int64
		err := b.pool.QueryRow(ctx, b.stmt("reserve_handed"), b.now(), string(p.Session), int64(id), p.Tubes).Scan(&jid, &tube, &prio, &body, &readyUS)
		if err != nil {
			return err
		}
		job = withReadyFor(&backend.Job{ID: uint64(jid), Tube: tube, Priority: uint32(prio), Body: body}, readyUS)
		return nil
	})
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil // no row: someone was faster, and the reserve goes on as usual
	}
	return job, err
}

// promotion is one promote_tubes statement: the tubes the attempts made at one "now" watch.
type promotion struct {
	now      any
	tubes    []string
	sessions []string // only counted: each may take one more due job
}

// promotionsOf gathers the attempts' tubes by their "now": one statement with the real clock (a
// test's fake clock may give attempts of one batch different times).
func promotionsOf(items []reserveItem) []promotion {
	var out []promotion
	at := map[any]int{}
	for _, it := range items {
		key := any(nil)
		if t, ok := it.now.(time.Time); ok {
			key = t.UnixNano()
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, promotion{now: it.now})
		}
		p := &out[i]
		p.sessions = append(p.sessions, it.session)
		for _, t := range it.tubes {
			if !slices.Contains(p.tubes, t) {
				p.tubes = append(p.tubes, t)
			}
		}
	}
	return out
}

type waitInfo struct {
	now         time.Time
	ownDeadline *time.Time
	nextDue     *time.Time
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// withReadyFor sets j's ReadyFor from the microseconds a reserve statement reported it ready
// (nil: not known, a job made ready by an older gateway version).
func withReadyFor(j *backend.Job, us *int64) *backend.Job {
	if us != nil {
		j.ReadyFor, j.HasReadyFor = time.Duration(*us)*time.Microsecond, true
	}
	return j
}

// shareEmpty gives every attempt of a group (its indexes in res) the answer its statement gave
// one it had no job for, if any: what is left ready over their tubes is nothing.
func shareEmpty(res []reserveResult, group map[string]int) {
	var empty *waitInfo
	for _, i := range group {
		if res[i].job == nil && !res[i].wait.now.IsZero() {
			w := res[i].wait
			w.ownDeadline = nil
			empty = &w
			break
		}
	}
	for _, i := range group {
		res[i].empty = empty
	}
}
