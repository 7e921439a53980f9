package postgres

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/beangate/beangate/backend"
)

// Policies live in the database (the policies table, migration 010), and the statements that
// make a state change read them there (tube_policy), so every gateway applies the same ones,
// atomically with what they guard. Each Backend also keeps a copy, reloaded when any gateway
// changes them (a notification "<origin> P") or its listener reconnects, and at every sweep: it
// only chooses between each statement's two variants (sql.go). With no policy anywhere the
// statements are those of a store without policies, and nothing else runs: no round trip,
// no cost more. With policies:
//   - time-driven actions (an expiry, a TTR run out under max-reserves or expire-after) are
//     applied by a tick (tick_*.sql) that runs before any call that reads or changes jobs once
//     the next such moment this Backend knows of has come, and by a sweep every
//     policySweepEvery, which also catches what other gateways made due;
//   - unique puts and reserves from tubes under max-reserved or rate take the tubes' advisory
//     locks first (lock_policy_tubes.sql), so two gateways never pass a cap or a rate together.
//   - a freed slot of a capped tube wakes this gateway's waiting reserves; other gateways' find
//     it at their next poll (a second) or through the notification of a job made ready.

// policySweepEvery is how often a Backend ticks while policies exist; without, it only reloads
// them, every LeaseTTL/3.
const policySweepEvery = 500 * time.Millisecond

// policyState is a Backend's copy of the policies and its tick bookkeeping.
type policyState struct {
	list      atomic.Pointer[[]backend.Policy]
	tickMu    sync.Mutex   // one tick at a time
	loaded    atomic.Int64 // when the copy was last loaded (UnixNano)
	nextMu    sync.Mutex
	next      time.Time // the next moment a tick has something to do; zero: at once
	obsMu     sync.Mutex
	observers []func(backend.PolicyAction)
}

// active reports whether any policy exists (as last loaded).
func (b *Backend) policiesActive() bool {
	l := b.pol.list.Load()
	return l != nil && len(*l) > 0
}

// policyOf is the policy that governs tube, as last loaded.
func (b *Backend) policyOf(tube string) (backend.Policy, bool) {
	l := b.pol.list.Load()
	if l == nil || len(*l) == 0 {
		return backend.Policy{}, false
	}
	return backend.MatchPolicy(*l, tube)
}

// stmt is the variant of statement name for the policies as last loaded.
func (b *Backend) stmt(name string) string { return b.variant(name, b.policiesActive()) }

// variant is statement name with policies or without.
func (b *Backend) variant(name string, policies bool) string {
	if policies {
		return b.st.get(name + policySuffix)
	}
	return b.st.get(name)
}

// tickAt makes the next tick come no later than at (zero: at once).
func (b *Backend) tickAt(at time.Time) {
	b.pol.nextMu.Lock()
	if at.IsZero() || at.Before(b.pol.next) {
		b.pol.next = at
	}
	b.pol.nextMu.Unlock()
}

// localNow is the time ticks are scheduled by: the injected clock's, else this host's.
func (b *Backend) localNow() time.Time {
	if b.opts.Clock != nil {
		return b.opts.Clock.Now()
	}
	return time.Now()
}

// tickPolicies runs a tick if policies exist and one is due (or force).
func (b *Backend) tickPolicies(ctx context.Context, force bool) error {
	if !b.policiesActive() {
		return nil
	}
	due := func() bool {
		b.pol.nextMu.Lock()
		defer b.pol.nextMu.Unlock()
		return !b.localNow().Before(b.pol.next)
	}
	if !force && !due() {
		return nil
	}
	b.pol.tickMu.Lock()
	defer b.pol.tickMu.Unlock()
	if !force && !due() {
		return nil // another call ticked meanwhile
	}
	var (
		acts     []backend.PolicyAction
		readied  = map[string]int{}
		gone     []string
		next     *time.Time
		started  = b.localNow()
		policies = b.policiesActive()
	)
	if !policies {
		return nil
	}
	err := b.call(ctx, func(ctx context.Context) error {
		acts, gone, next = acts[:0], gone[:0], nil
		clear(readied)
		now := b.now()
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("tick_reservations"), now).Query(func(rows pgx.Rows) error {
			var id int64
			var tube string
			var buried, delayed bool
			_, err := pgx.ForEachRow(rows, []any{&id, &tube, &buried, &delayed}, func() error {
				switch {
				case buried:
					acts = append(acts, backend.PolicyAction{Tube: tube, Policy: backend.PolicyMaxReserves, Action: backend.ActionBury, Job: uint64(id)})
				case delayed:
					acts = append(acts, backend.PolicyAction{Tube: tube, Policy: backend.PolicyRetryDelay, Action: backend.ActionDelay, Job: uint64(id)})
				default:
					readied[tube]++
				}
				return nil
			})
			return err
		})
		bt.Queue(b.st.get("tick_expire"), now).Query(func(rows pgx.Rows) error {
			var id *int64
			var tube string
			var action *string
			_, err := pgx.ForEachRow(rows, []any{&id, &tube, &action}, func() error {
				if id == nil {
					gone = append(gone, tube)
					return nil
				}
				acts = append(acts, backend.PolicyAction{Tube: tube, Policy: backend.PolicyExpireAfter, Action: *action, Job: uint64(*id)})
				return nil
			})
			return err
		})
		bt.Queue(b.st.get("tick_next")).QueryRow(func(row pgx.Row) error { return row.Scan(&next) })
		return b.batch(ctx, bt)
	})
	if err != nil {
		return opErr("policy tick", err)
	}
	b.pol.nextMu.Lock()
	switch {
	case next == nil:
		b.pol.next = started.Add(time.Hour) // nothing known: the sweep and the marks do
	case b.pol.next.IsZero() || b.pol.next.Before(started):
		b.pol.next = *next // unless a call marked a sooner moment while this tick ran
	default:
		b.pol.next = minTime(b.pol.next, *next)
	}
	b.pol.nextMu.Unlock()
	for tube, n := range readied {
		b.waiters.wake(tube, n)
	}
	b.report(acts...)
	if len(gone) > 0 {
		return opErr("policy tick", b.gcTubes(ctx, gone))
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// report hands actions to the observers.
func (b *Backend) report(acts ...backend.PolicyAction) {
	if len(acts) == 0 {
		return
	}
	b.pol.obsMu.Lock()
	obs := b.pol.observers
	b.pol.obsMu.Unlock()
	for _, a := range acts {
		for _, f := range obs {
			f(a)
		}
	}
}

// ObservePolicyActions has f called with every action a call or a tick of this Backend took.
func (b *Backend) ObservePolicyActions(f func(backend.PolicyAction)) {
	b.pol.obsMu.Lock()
	b.pol.observers = append(b.pol.observers, f)
	b.pol.obsMu.Unlock()
}

// loadPolicies reloads the copy of the policies.
func (b *Backend) loadPolicies(ctx context.Context) error {
	ps, err := b.queryPolicies(ctx, nil)
	if err != nil {
		return err
	}
	was := b.policiesActive()
	b.pol.list.Store(&ps)
	b.pol.loaded.Store(time.Now().UnixNano())
	if len(ps) > 0 && !was {
		b.tickAt(time.Time{})
	}
	return nil
}

// queryPolicies reads every policy, or the one keyed pattern.
func (b *Backend) queryPolicies(ctx context.Context, pattern *string) ([]backend.Policy, error) {
	var ps []backend.Policy
	err := b.call(ctx, func(ctx context.Context) error {
		ps = ps[:0]
		rows, err := b.pool.Query(ctx, b.st.get("policy_list"), pattern)
		if err != nil {
			return err
		}
		var (
			p                      backend.Policy
			mr, ea, mx, bu, rd, rm int64
			act                    int16
		)
		_, err = pgx.ForEachRow(rows, []any{&p.Tube, &mr, &ea, &act, &mx, &p.Rate, &bu, &p.Unique, &rd, &rm, &p.History}, func() error {
			q := p
			q.MaxReserves, q.ExpireAfter, q.MaxReserved, q.Burst = uint32(mr), time.Duration(ea)*time.Microsecond, uint32(mx), uint32(bu)
			q.RetryDelay, q.RetryDelayMax = time.Duration(rd)*time.Microsecond, time.Duration(rm)*time.Microsecond
			switch act {
			case 1:
				q.ExpireAction = backend.ExpireDelete
			case 2:
				q.ExpireAction = backend.ExpireBury
			}
			ps = append(ps, q)
			return nil
		})
		return err
	})
	return ps, opErr("policies", err)
}

// Policy returns the policy keyed pattern.
func (b *Backend) Policy(ctx context.Context, pattern string) (backend.Policy, error) {
	ps, err := b.queryPolicies(ctx, &pattern)
	if err != nil {
		return backend.Policy{}, err
	}
	if len(ps) == 0 {
		return backend.Policy{}, backend.ErrNotFound
	}
	return ps[0], nil
}

// ListPolicies returns every policy, sorted by pattern.
func (b *Backend) ListPolicies(ctx context.Context) ([]backend.Policy, error) {
	ps, err := b.queryPolicies(ctx, nil)
	if err != nil {
		return nil, err
	}
	backend.SortPolicies(ps)
	return ps, nil
}

// SetPolicy sets the policy keyed p.Tube and files every job under the policies now in force.
func (b *Backend) SetPolicy(ctx context.Context, p backend.Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	stars := strings.Count(p.Tube, "*")
	act := 0
	switch p.ExpireAction {
	case backend.ExpireDelete:
		act = 1
	case backend.ExpireBury:
		act = 2
	}
	err := b.run(ctx, "set policy", func(ctx context.Context) error {
		bt := &pgx.Batch{}
		bt.Queue(b.st.get("policy_set"), p.Tube, likePattern(p.Tube), stars > 0, len(p.Tube)-stars, stars,
			int64(p.MaxReserves), p.ExpireAfter.Microseconds(), int16(act), int64(p.MaxReserved), p.Rate,
			int64(p.Burst), p.Unique, p.RetryDelay.Microseconds(), p.RetryDelayMax.Microseconds(), p.History)
		bt.Queue(b.st.get("policy_apply"), p.Tube, likePattern(p.Tube), stars > 0, true)
		return b.batch(ctx, bt)
	})
	if err != nil {
		return err
	}
	return b.policiesChanged(ctx)
}

// ClearPolicy removes the policy keyed pattern.
func (b *Backend) ClearPolicy(ctx context.Context, pattern string) error {
	found := false
	err := b.run(ctx, "clear policy", func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			found = false
			rows, err := tx.Query(ctx, b.st.get("policy_clear"), pattern)
			if err != nil {
				return err
			}
			if _, err := pgx.ForEachRow(rows, []any{new(string)}, func() error { found = true; return nil }); err != nil {
				return err
			}
			// Only a pattern that governed tubes drops their rate buckets.
			_, err = tx.Exec(ctx, b.st.get("policy_apply"), pattern, likePattern(pattern), strings.Contains(pattern, "*"), found)
			return err
		})
	})
	if err != nil {
		return err
	}
	if !found {
		return backend.ErrNotFound
	}
	return b.policiesChanged(ctx)
}

// policiesChanged follows a change made here: the copy is reloaded, a tick runs, and the
// waiting reserves try again (a limit raised or lifted may let them take a job).
func (b *Backend) policiesChanged(ctx context.Context) error {
	err := b.loadPolicies(ctx)
	b.tickAt(time.Time{})
	b.waiters.wakeAll()
	return err
}

// likePattern is a glob as a LIKE pattern: '*' any run of characters, the rest itself.
func likePattern(glob string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`, `*`, `%`)
	return r.Replace(glob)
}

// policyLocks are the tubes of tubes whose advisory locks a batch takes (lock_policy_tubes.sql):
// those under a policy that has need.
func (b *Backend) policyLocks(tubes []string, need func(backend.Policy) bool) []string {
	var out []string
	for _, t := range tubes {
		if p, ok := b.policyOf(t); ok && need(p) {
			out = append(out, t)
		}
	}
	return out
}

// freedSlot wakes this gateway's waiting reserves after a reservation of tube ended otherwise
// than by a job made ready (delete, bury, a release buried or delayed), if a cap governs the
// tube ("" when the tube is not known: all of them).
func (b *Backend) freedSlot(tube string) {
	if !b.policiesActive() {
		return
	}
	if tube == "" {
		if b.anyPolicy(func(p backend.Policy) bool { return p.MaxReserved > 0 }) {
			b.waiters.wakeAll()
		}
		return
	}
	if p, ok := b.policyOf(tube); ok && p.MaxReserved > 0 {
		b.waiters.wake(tube, 1)
	}
}

// policySweepLoop ticks every policySweepEvery while policies exist, and reloads them every
// LeaseTTL/3 otherwise, until Close.
func (b *Backend) policySweepLoop() {
	defer b.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		ctx := context.Background()
		if b.policiesActive() && time.Since(time.Unix(0, b.pol.loaded.Load())) < b.opts.LeaseTTL/3 {
			if err := b.tickPolicies(ctx, true); err != nil {
				b.opts.Logger.Debug("postgres: policy tick failed", "err", err)
			}
			t.Reset(policySweepEvery)
			continue
		}
		if err := b.loadPolicies(ctx); err != nil {
			b.opts.Logger.Debug("postgres: loading the policies failed", "err", err)
		}
		if b.policiesActive() {
			t.Reset(0)
		} else {
			t.Reset(b.opts.LeaseTTL / 3)
		}
	}
}

// anyPolicy reports whether a policy (as last loaded) has need.
func (b *Backend) anyPolicy(need func(backend.Policy) bool) bool {
	l := b.pol.list.Load()
	return l != nil && slices.ContainsFunc(*l, need)
}

// cameBack follows a reservation of tube that ended (a release, a bury, a session's end; ""
// when not known): its slot wakes waiting reserves of a capped tube, and a job that came back
// past its expiry makes the tick come at once. After a session's end, a job it held may have
// been backed off (retry-delay) to a time sooner than the waiters' timers know: they try again.
func (b *Backend) cameBack(tube string) {
	if !b.policiesActive() {
		return
	}
	b.freedSlot(tube)
	if tube == "" && b.anyPolicy(func(p backend.Policy) bool { return p.RetryDelay > 0 }) {
		b.waiters.wakeAll()
	}
	if p, ok := b.policyOf(tube); tube == "" || ok && p.ExpireAfter > 0 {
		b.tickAt(time.Time{})
	}
}

// reserved follows a reservation of a job of tube: under max-reserves, expire-after or
// retry-delay its deadline is something a tick acts on, at the earliest a TTR (1 s) from now.
func (b *Backend) reserved(tube string) {
	if p, ok := b.policyOf(tube); ok && (p.MaxReserves > 0 || p.ExpireAfter > 0 || p.RetryDelay > 0) {
		b.tickAt(b.localNow().Add(time.Second))
	}
}

// heldBy names the policy that held tube back: its rate when it has no cap, else its cap.
func (b *Backend) heldBy(tube string) string {
	if p, ok := b.policyOf(tube); ok && p.Rate > 0 && p.MaxReserved == 0 {
		return backend.PolicyRate
	}
	return backend.PolicyMaxReserved
}
