package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// Policies live in Redis, so that every gateway of a namespace applies the same ones: the
// B:policies hash keeps each (pattern -> encodePolicy), and each tube's hash the text of the
// one that governs it, which every script reads with the tube's other hot fields (lua/lib.lua):
// a tube without a policy costs no command more. Each action a script takes comes back with its
// reply (takeActions) and is reported by the gateway whose call took it.

// policySweepEvery is how often each gateway applies the due transitions of the tubes a policy
// governs (lua/policy_sweep.lua), so that an expiry acts within it even when nobody looks. A
// namespace where no tube is governed is looked at only every LeaseTTL/3, with the heartbeat's
// period: no call more than that when policies are not used.
const policySweepEvery = 500 * time.Millisecond

// actionsMarker starts a reply that carries policy actions: {marker, reply, tube, policy,
// action, id, ...} (with_actions in lua/lib.lua).
const actionsMarker = "\x00pa"

// encodePolicy is p as the scripts read it: "maxReserves expireAfterNs action maxReserved rate
// burst unique retryDelayNs retryDelayMaxNs history", action 0 unset, 1 delete, 2 bury. (A
// policy written before retry delays existed has the first seven fields only, one written
// before histories the first nine.)
func encodePolicy(p backend.Policy) string {
	act := 0
	switch p.ExpireAction {
	case backend.ExpireDelete:
		act = 1
	case backend.ExpireBury:
		act = 2
	}
	u, hi := 0, 0
	if p.Unique {
		u = 1
	}
	if p.History {
		hi = 1
	}
	return fmt.Sprintf("%d %d %d %d %s %d %d %d %d %d", p.MaxReserves, p.ExpireAfter.Nanoseconds(), act,
		p.MaxReserved, strconv.FormatFloat(p.Rate, 'g', -1, 64), p.Burst, u, p.RetryDelay.Nanoseconds(),
		p.RetryDelayMax.Nanoseconds(), hi)
}

// decodePolicy reverses encodePolicy.
func decodePolicy(pattern, s string) (backend.Policy, error) {
	f := strings.Fields(s)
	if len(f) != 7 && len(f) != 9 && len(f) != 10 {
		return backend.Policy{}, fmt.Errorf("policy %q: %d fields", pattern, len(f))
	}
	var n [10]uint64
	for i, x := range f {
		if i == 4 {
			continue
		}
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return backend.Policy{}, fmt.Errorf("policy %q: field %d: %w", pattern, i+1, err)
		}
		n[i] = v
	}
	rate, err := strconv.ParseFloat(f[4], 64)
	if err != nil {
		return backend.Policy{}, fmt.Errorf("policy %q: rate: %w", pattern, err)
	}
	p := backend.Policy{Tube: pattern, MaxReserves: uint32(n[0]), ExpireAfter: time.Duration(n[1]),
		MaxReserved: uint32(n[3]), Rate: rate, Burst: uint32(n[5]), Unique: n[6] == 1,
		RetryDelay: time.Duration(n[7]), RetryDelayMax: time.Duration(n[8]), History: n[9] == 1}
	switch n[2] {
	case 1:
		p.ExpireAction = backend.ExpireDelete
	case 2:
		p.ExpireAction = backend.ExpireBury
	}
	return p, nil
}

func (b *Backend) policiesKey() string { return b.base + ":policies" }

// SetPolicy sets the policy keyed p.Tube and files every existing tube under the policy that
// now governs it, in one script.
func (b *Backend) SetPolicy(ctx context.Context, p backend.Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	var err error
	if b.spread != nil {
		err = b.spreadPolicyCall(ctx, opPolicySet, p.Tube, encodePolicy(p))
	} else {
		_, err = b.call(ctx, opPolicySet, p.Tube, encodePolicy(p))
	}
	select {
	case b.sweepNow <- struct{}{}:
	default:
	}
	return err
}

// ClearPolicy removes the policy keyed pattern.
func (b *Backend) ClearPolicy(ctx context.Context, pattern string) error {
	if b.spread != nil {
		return b.spreadPolicyCall(ctx, opPolicyClear, pattern)
	}
	_, err := b.call(ctx, opPolicyClear, pattern)
	return err
}

// Policy returns the policy keyed pattern.
func (b *Backend) Policy(ctx context.Context, pattern string) (backend.Policy, error) {
	if err := b.reach.Check(); err != nil {
		return backend.Policy{}, opErr("policy", err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	defer cancel()
	s, err := b.client.HGet(ctx, b.policiesKey(), pattern).Result()
	if err != nil {
		return backend.Policy{}, opErr("policy", err)
	}
	p, err := decodePolicy(pattern, s)
	return p, opErr("policy", err)
}

// ListPolicies returns every policy, sorted by pattern.
func (b *Backend) ListPolicies(ctx context.Context) ([]backend.Policy, error) {
	if err := b.reach.Check(); err != nil {
		return nil, opErr("list policies", err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.CommandTimeout)
	defer cancel()
	all, err := b.client.HGetAll(ctx, b.policiesKey()).Result()
	if err != nil {
		return nil, opErr("list policies", err)
	}
	ps := make([]backend.Policy, 0, len(all))
	for pattern, s := range all {
		p, err := decodePolicy(pattern, s)
		if err != nil {
			return nil, opErr("list policies", err)
		}
		ps = append(ps, p)
	}
	backend.SortPolicies(ps)
	return ps, nil
}

// ObservePolicyActions has f called with every action a call of this Backend took.
func (b *Backend) ObservePolicyActions(f func(backend.PolicyAction)) {
	b.observersMu.Lock()
	b.observers = append(b.observers, f)
	b.observersMu.Unlock()
}

// takeActions unwraps a reply that carries policy actions, reporting them; a nil reply inside
// is the script's false (goredis.Nil), as without actions.
func (b *Backend) takeActions(v any) (any, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 2 {
		return v, nil
	}
	if m, ok := a[0].(string); !ok || m != actionsMarker {
		return v, nil
	}
	b.observersMu.Lock()
	obs := b.observers
	b.observersMu.Unlock()
	for i := 2; i+4 <= len(a); i += 4 {
		pa := backend.PolicyAction{}
		pa.Tube, _ = a[i].(string)
		pa.Policy, _ = a[i+1].(string)
		pa.Action, _ = a[i+2].(string)
		if id, ok := a[i+3].(string); ok {
			pa.Job, _ = strconv.ParseUint(id, 10, 64)
		}
		for _, f := range obs {
			f(pa)
		}
	}
	if a[1] == nil {
		return nil, goredis.Nil
	}
	return a[1], nil
}

// policySweepLoop runs the policy sweep until Close: every policySweepEvery while the last
// sweep found governed tubes, else every LeaseTTL/3 or when this Backend sets a policy.
func (b *Backend) policySweepLoop() {
	defer b.wg.Done()
	idle := b.opts.LeaseTTL / 3
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.sweepNow:
			t.Stop()
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.opts.CommandTimeout)
		var res any
		var err error
		if b.spread != nil {
			res, err = b.spreadSweep(ctx)
		} else {
			res, err = b.call(ctx, opPolicySweep)
		}
		cancel()
		if err != nil && b.reach.Check() == nil {
			b.opts.Logger.Debug("redis: policy sweep failed", "err", err)
		}
		next := idle
		if n, _ := res.(int64); n > 0 {
			next = policySweepEvery
		}
		t.Reset(next)
	}
}
