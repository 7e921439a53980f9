package memory

import (
	"context"
	"hash/maphash"
	"slices"
	"time"

	"github.com/beangate/beangate/backend"
)

// Per-tube policies (backend.Policies). A tube governed by one carries a *tubePolicy; every
// hook on the hot paths tests that pointer first, so that a store with no policy pays one nil
// test per operation and keeps beanstalkd's behaviour exactly.

// tubePolicy is the policy governing one tube, with the tube's own state for it.
type tubePolicy struct {
	backend.Policy
	// Rate, as a GCRA (a token bucket kept as one time): period is the nanoseconds one token
	// takes to accrue, limit the bucket's size in nanoseconds, tat the theoretical arrival
	// time of the next reserve. 0 tat: a full bucket.
	period, limit, tat int64
	// unique maps a body hash to the tube's jobs with that hash, in any state: the lookup
	// filters the ready and delayed ones, so that only joining and leaving the tube update it.
	unique map[uint64][]*job
}

// policies is the store's policy state.
type policies struct {
	list      []backend.Policy // sorted by Tube
	seed      maphash.Seed
	expiring  indexedHeap[*job] // the unexpired jobs of tubes with an expiry, by expiry time
	rateWaits map[*tube]int64   // rate-limited tubes with waiters: when their next token accrues
	observers []func(backend.PolicyAction)
	file      *policyFile // nil without a binlog
}

// expiresAt is when j expires, by its tube's policy: defined while j is in Backend.pol.expiring
// (its tube has an expiry, and it leaves the heap before it changes tube or the policies
// change), so the heap's keys stay fixed.
func (j *job) expiresAt() int64 { return j.created + int64(j.tube.pol.ExpireAfter) }

func byExpiry(a, b *job) bool {
	ea, eb := a.expiresAt(), b.expiresAt()
	return ea < eb || (ea == eb && a.id < b.id)
}

// setExpiryIndex keeps position + 1 in eIdx, so that a job's zero value is "not in the heap".
func setExpiryIndex(j *job, i int) { j.eIdx = int32(i + 1) }

// newTubePolicyLocked returns the policy state for a tube named name; nil when no policy
// matches it.
func (b *Backend) newTubePolicyLocked(name string) *tubePolicy {
	p, ok := backend.MatchPolicy(b.pol.list, name)
	if !ok {
		return nil
	}
	tp := &tubePolicy{Policy: p}
	if p.Rate > 0 {
		tp.period = max(int64(float64(time.Second)/p.Rate), 1)
		tp.limit = tp.period * int64(p.BucketSize())
	}
	if p.Unique {
		tp.unique = make(map[uint64][]*job)
	}
	return tp
}

// act reports one action to the observers (under the lock: they must not call the store).
func (b *Backend) actLocked(tube, policy, action string, id uint64) {
	for _, f := range b.pol.observers {
		f(backend.PolicyAction{Tube: tube, Policy: policy, Action: action, Job: id})
	}
}

// ObservePolicyActions has f called with every action a policy takes.
func (b *Backend) ObservePolicyActions(f func(backend.PolicyAction)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pol.observers = append(b.pol.observers, f)
}

// SetPolicy sets the policy keyed p.Tube and applies it at once.
func (b *Backend) SetPolicy(ctx context.Context, p backend.Policy) (err error) {
	if err := p.Validate(); err != nil {
		return err
	}
	now, err := b.begin(ctx, "set-policy")
	if err != nil {
		return err
	}
	defer b.endWrite("set-policy", &err)
	list := slices.Clone(b.pol.list)
	if i := slices.IndexFunc(list, func(q backend.Policy) bool { return q.Tube == p.Tube }); i >= 0 {
		list[i] = p
	} else {
		list = append(list, p)
		backend.SortPolicies(list)
	}
	return b.replacePoliciesLocked(list, now)
}

// Policy returns the policy keyed pattern.
func (b *Backend) Policy(ctx context.Context, pattern string) (backend.Policy, error) {
	if _, err := b.begin(ctx, "get-policy"); err != nil {
		return backend.Policy{}, err
	}
	defer b.end()
	for _, p := range b.pol.list {
		if p.Tube == pattern {
			return p, nil
		}
	}
	return backend.Policy{}, backend.ErrNotFound
}

// ListPolicies returns every policy, sorted by Tube.
func (b *Backend) ListPolicies(ctx context.Context) ([]backend.Policy, error) {
	if _, err := b.begin(ctx, "list-policies"); err != nil {
		return nil, err
	}
	defer b.end()
	return slices.Clone(b.pol.list), nil
}

// ClearPolicy removes the policy keyed pattern.
func (b *Backend) ClearPolicy(ctx context.Context, pattern string) (err error) {
	now, err := b.begin(ctx, "clear-policy")
	if err != nil {
		return err
	}
	defer b.endWrite("clear-policy", &err)
	i := slices.IndexFunc(b.pol.list, func(q backend.Policy) bool { return q.Tube == pattern })
	if i < 0 {
		return backend.ErrNotFound
	}
	return b.replacePoliciesLocked(slices.Delete(slices.Clone(b.pol.list), i, i+1), now)
}

// replacePoliciesLocked makes list the store's policies: saved first (with a binlog), then
// applied to every tube.
func (b *Backend) replacePoliciesLocked(list []backend.Policy, now time.Time) error {
	if b.pol.file != nil {
		if err := b.pol.file.save(list); err != nil {
			return opErr("policy", err)
		}
	}
	b.pol.list = list
	b.applyPoliciesLocked(now)
	return nil
}

// applyPoliciesLocked gives every tube the policy matching it now and rebuilds what policies
// index (unique bodies, expiry times) from the jobs: O(jobs), on a policy change only. A tube
// whose policy is unchanged keeps its rate state. Waiters are then served, as a cap raised or
// cleared may let them take jobs at once; expiries already past act at the next due check.
func (b *Backend) applyPoliciesLocked(now time.Time) {
	for _, j := range b.pol.expiring.items {
		j.eIdx = 0
	}
	b.pol.expiring.items = nil // emptied before the keys change
	b.pol.rateWaits = nil
	indexJobs := false
	for _, t := range b.order {
		old := t.pol
		t.pol = b.newTubePolicyLocked(t.name)
		if t.pol != nil && old != nil && t.pol.Policy == old.Policy {
			t.pol.tat = old.tat
		}
		if t.pol != nil && (t.pol.Unique || t.pol.ExpireAfter > 0) {
			indexJobs = true
		}
	}
	if indexJobs {
		b.eachJobLocked(b.joinedLocked)
	}
	b.dropHistoriesLocked()
	for _, t := range b.order {
		if t.waiters.Len() > 0 {
			b.serveLocked(t, now)
		}
	}
}

// eachJobLocked calls fn on every job of every tube governed by a policy.
func (b *Backend) eachJobLocked(fn func(*job)) {
	visit := func(j *job) bool { fn(j); return true }
	for _, t := range b.order {
		if t.pol == nil {
			continue
		}
		t.ready.after(nil, visit)
		t.delayed.after(nil, visit)
		t.buried.after(nil, visit)
	}
	for _, s := range b.sessions {
		for _, j := range s.reserved.items {
			if j.tube.pol != nil {
				fn(j)
			}
		}
	}
}

func (b *Backend) bodyHash(j *job) uint64 { return maphash.String(b.pol.seed, j.body) }

// joinedLocked indexes j, which has just come into its tube (governed by a policy).
func (b *Backend) joinedLocked(j *job) {
	p := j.tube.pol
	if p.unique != nil {
		h := b.bodyHash(j)
		p.unique[h] = append(p.unique[h], j)
	}
	if p.ExpireAfter > 0 && !j.expired {
		b.pol.expiring.Push(j)
	}
}

// leftLocked unindexes j, which is leaving its tube (governed by a policy): deleted or moved.
func (b *Backend) leftLocked(j *job) {
	if j.eIdx > 0 {
		b.pol.expiring.Remove(int(j.eIdx - 1))
	}
	p := j.tube.pol
	if p.unique == nil {
		return
	}
	h := b.bodyHash(j)
	js := p.unique[h]
	if i := slices.Index(js, j); i >= 0 {
		js = slices.Delete(js, i, i+1)
	}
	if len(js) == 0 {
		delete(p.unique, h)
	} else {
		p.unique[h] = js
	}
}

// duplicateLocked returns the job of t (governed by a unique policy) now ready or delayed with
// body, if any.
func (b *Backend) duplicateLocked(t *tube, body []byte) *job {
	for _, j := range t.pol.unique[maphash.Bytes(b.pol.seed, body)] {
		if (j.state == jobReady || j.state == jobDelayed) && j.body == string(body) {
			return j
		}
	}
	return nil
}

// admitLocked reports whether a reserve may take a ready job of t (governed by a policy) now:
// not while t holds its max-reserved, nor without a token of its rate. A refusal is a defer;
// one for want of a token has t served again when the token accrues.
func (b *Backend) admitLocked(t *tube, now time.Time) bool {
	p := t.pol
	if p.MaxReserved > 0 && t.reserved >= uint64(p.MaxReserved) {
		b.actLocked(t.name, backend.PolicyMaxReserved, backend.ActionDefer, 0)
		return false
	}
	if p.period > 0 {
		n := nanos(now)
		if max(p.tat, n)+p.period-n > p.limit {
			if b.pol.rateWaits == nil {
				b.pol.rateWaits = make(map[*tube]int64)
			}
			b.pol.rateWaits[t] = p.tat - p.limit + p.period
			b.actLocked(t.name, backend.PolicyRate, backend.ActionDefer, 0)
			return false
		}
	}
	return true
}

// admitted spends a token of t's rate (t governed by a policy), if it has one, for a reserve
// that took a job.
func (t *tube) admitted(now time.Time) {
	if p := t.pol; p.period > 0 {
		p.tat = max(p.tat, nanos(now)) + p.period
	}
}

// overReserves reports whether j, coming back from a reservation, has used up its tube's
// max-reserves.
func (j *job) overReserves() bool {
	p := j.tube.pol
	return p != nil && p.MaxReserves > 0 && j.reserves >= p.MaxReserves
}

// expiredAt reports whether j's tube's expiry has come for it by at.
func (j *job) expiredAt(at time.Time) bool {
	p := j.tube.pol
	return p != nil && p.ExpireAfter > 0 && !j.expired && j.created+int64(p.ExpireAfter) <= nanos(at)
}

// comeBackLocked places j, detached at the end of a reservation (counters done), where its
// tube's policies send it instead of ready or delayed: deleted or buried if it has expired,
// buried if it has used up its max-reserves, else delayed by its retry backoff unless its
// holder released it with a delay of its own (requested > 0). It reports whether it placed j
// (false: the caller requeues it as usual) and whether it buried it. roomReserved tells whether
// the caller has reserved binlog room for one record.
func (b *Backend) comeBackLocked(j *job, at time.Time, requested time.Duration, roomReserved bool) (placed, buried bool) {
	t := j.tube
	switch {
	case j.expiredAt(at) && t.pol.Action() == backend.ExpireDelete:
		if roomReserved {
			b.walUnreserveLocked(walUpdateSize)
		}
		b.expireDeleteLocked(j)
		return true, false
	case j.expiredAt(at):
		if !roomReserved && b.walReserveLocked(walUpdateSize) != nil {
			return false, false // no room for the record: requeued as without the policy
		}
		j.expired = true
		j.buries++
		b.buryLocked(j)
		b.walUpdateLocked(j)
		b.actLocked(t.name, backend.PolicyExpireAfter, backend.ActionBury, j.id)
		b.recordLocked(j, at, backend.EventBuried, nil, 0, backend.PolicyExpireAfter)
		return true, true
	case j.overReserves():
		if !roomReserved && b.walReserveLocked(walUpdateSize) != nil {
			return false, false
		}
		j.buries++
		b.buryLocked(j)
		b.walUpdateLocked(j)
		b.actLocked(t.name, backend.PolicyMaxReserves, backend.ActionBury, j.id)
		b.recordLocked(j, at, backend.EventBuried, nil, 0, backend.PolicyMaxReserves)
		return true, true
	case t.pol.RetryDelay > 0 && requested == 0:
		if !roomReserved && b.walReserveLocked(walUpdateSize) != nil {
			return false, false
		}
		j.delay = t.pol.RetryBackoff(j.reserves)
		b.delayLocked(j, at, j.delay)
		b.walUpdateLocked(j)
		b.actLocked(t.name, backend.PolicyRetryDelay, backend.ActionDelay, j.id)
		b.recordLocked(j, at, backend.EventDelayed, nil, j.delay, backend.PolicyRetryDelay)
		return true, false
	}
	return false, false
}

// slotFreedLocked follows the end of a reservation of a job of t (governed by a policy), once
// the job is placed: under a max-reserved, the slot it held may go to a waiting reserve.
func (b *Backend) slotFreedLocked(t *tube, at time.Time) {
	if t.pol.MaxReserved > 0 {
		b.serveLocked(t, at)
	}
}

// expireDeleteLocked deletes j (not reserved) as its tube's expiry says.
func (b *Backend) expireDeleteLocked(j *job) {
	name, id := j.tube.name, j.id
	b.walDeleteLocked(j)
	b.detachLocked(j)
	b.removeLocked(j)
	b.actLocked(name, backend.PolicyExpireAfter, backend.ActionDelete, id)
}

// policyDueLocked returns the earliest policy event: an expiry or a token for waiters.
func (b *Backend) policyDueLocked() (int64, bool) {
	var at int64
	ok := false
	if j, in := b.pol.expiring.Top(); in {
		at, ok = j.expiresAt(), true
	}
	for _, w := range b.pol.rateWaits {
		if !ok || w < at {
			at, ok = w, true
		}
	}
	return at, ok
}

// applyPolicyDueLocked applies the policy events due at at.
func (b *Backend) applyPolicyDueLocked(at time.Time) {
	n := nanos(at)
	for t, w := range b.pol.rateWaits {
		if w <= n {
			delete(b.pol.rateWaits, t)
			b.serveLocked(t, at)
		}
	}
	for {
		j, ok := b.pol.expiring.Top()
		if !ok || j.expiresAt() > n {
			return
		}
		b.pol.expiring.Pop()
		b.expireLocked(j, at)
	}
}

// expireLocked applies its tube's expiry to j, whose time has come, taken out of the heap. A
// reserved job is left to its holder (comeBackLocked expires it when it comes back).
func (b *Backend) expireLocked(j *job, at time.Time) {
	switch {
	case j.state == jobReserved:
	case j.tube.pol.Action() == backend.ExpireDelete:
		b.expireDeleteLocked(j)
	case j.state == jobBuried:
		j.expired = true
	default:
		if b.walReserveLocked(walUpdateSize) != nil {
			return // no room for the record: the job stays as it is
		}
		b.detachLocked(j)
		j.expired = true
		j.buries++
		b.buryLocked(j)
		b.walUpdateLocked(j)
		b.actLocked(j.tube.name, backend.PolicyExpireAfter, backend.ActionBury, j.id)
		b.recordLocked(j, at, backend.EventBuried, nil, 0, backend.PolicyExpireAfter)
	}
}

// walUnreserveLocked gives back room reserved for a record that will not be written.
func (b *Backend) walUnreserveLocked(n int64) {
	if b.wal != nil {
		b.wal.Unreserve(n)
	}
}
