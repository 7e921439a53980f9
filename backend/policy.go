package backend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Policies is the part of Admin that sets per-tube policies: rules a store applies to a tube's
// jobs on its own, so that every client gets them without sending anything new.
//
// A policy is keyed by its Tube: a tube name or a glob in which '*' matches any run of
// characters (tube names never contain '*'). A tube is governed by the one policy that
// matches it most specifically (MatchPolicy), applied whole: fields are not merged across
// patterns, so a policy with no limit set exempts the tubes it matches from a broader glob's.
// With no policy matching a tube, the store behaves exactly as without policies.
//
// Changes apply from the store's next state change on: jobs already reserved stay reserved
// (a lowered cap only stops new reserves), counters already spent count (a job reserved 3 times
// under a new max-reserves 2 is buried the next time it would become ready).
//
// What each field does, for every store:
//   - MaxReserves N: a job of the tube with Reserves >= N that would become ready or delayed again
//     — its TTR ran out, its holder's session ended, or its holder released it — is buried
//     instead, with its releases/timeouts counted as they would be and Buries + 1. A Release
//     doing so answers ErrBuried (the job stays buried). Kick is not affected: a kicked job gets
//     one more reservation before it is buried again.
//   - ExpireAfter D: a job of the tube not deleted D after its put (JobStats.Age >= D) is
//     deleted (ExpireDelete) or buried (ExpireBury, Buries + 1) if it is ready, delayed or
//     buried (ExpireBury leaves a buried job as it is); a reserved job is left to its holder and
//     expires as soon as it comes back. A job expires once: one kicked after ExpireBury buried
//     it is not buried again by expiry. The action happens at the deadline even if nobody calls
//     the store (a store may act up to a second late).
//   - MaxReserved N: a Reserve (not ReserveJob) takes no job from the tube while N or more of
//     its jobs are reserved, by anyone, across every gateway sharing the store: the tube counts
//     as having nothing ready, so the reserve takes from its other watched tubes, or waits (and
//     is woken when a slot frees), or times out.
//   - Rate R (with Burst B): Reserves take at most R jobs per second from the tube, fleet-wide,
//     by a token bucket holding up to B tokens (B == 0 means 1), full when the policy is set;
//     a reserve finding no token treats the tube as empty and is woken when one accrues.
//   - RetryDelay D (with RetryDelayMax M): a job of the tube that comes back from a reservation
//     without being deleted or buried — its TTR ran out, its holder's session ended, or its
//     holder released it with delay 0 — is delayed for RetryBackoff(Reserves) instead of made
//     ready: D × 2^(Reserves−1), at most M (MaxRetryDelay when M is 0). Its delay (JobStats.Delay)
//     becomes that backoff; a release with a delay > 0 keeps the client's delay. MaxReserves and
//     ExpireAfter are checked first: a job they take is buried or deleted, not delayed, so that
//     with MaxReserves N a job is tried N times with growing pauses, then buried.
//   - History: every job put into the tube keeps the events of its life (JobHistory) until it
//     is deleted: the last MaxJobEvents of them. A job put while the tube had no history keeps
//     none; a policy that stops History drops its tube's jobs' histories.
//   - Unique: a Put (or PutBatch entry) into the tube whose body equals that of a job of the
//     tube now ready or delayed returns that job's id and stores nothing (the tube's total-jobs
//     does not grow); the lookup is by a hash of the body, not a scan. Jobs reserved or buried
//     are not matched: a put then makes a new job, and the two may coexist once the first comes
//     back.
//
// Every action a policy takes is reported to the observers of ObservePolicyActions.
type Policies interface {
	// SetPolicy sets (replaces whole) the policy keyed p.Tube; p must pass p.Validate
	// (ErrBadPolicy otherwise). It applies at once to existing jobs and waiting reserves: a
	// raised cap wakes waiters, an expiry already past acts.
	SetPolicy(ctx context.Context, p Policy) error

	// Policy returns the policy keyed pattern exactly (no glob matching: see MatchPolicy);
	// ErrNotFound if there is none.
	Policy(ctx context.Context, pattern string) (Policy, error)

	// ListPolicies returns every policy, sorted by Tube.
	ListPolicies(ctx context.Context) ([]Policy, error)

	// ClearPolicy removes the policy keyed pattern exactly; ErrNotFound if there is none. The
	// tubes it governed fall to the next most specific match, or to no policy.
	ClearPolicy(ctx context.Context, pattern string) error

	// ObservePolicyActions has f called with every action a policy takes from now on, in this
	// process (a store shared by many gateways reports an action to the gateway whose call, or
	// whose sweep, took it). f must not call the store or block.
	ObservePolicyActions(f func(PolicyAction))
}

// ErrBuried: Release did its work but a policy buried the job instead of requeueing it
// (MaxReserves used up, or ExpireAfter past with ExpireBury): the gateway answers BURIED, as
// beanstalkd does when it cannot requeue a released job.
var ErrBuried = errors.New("backend: buried")

// ErrBadPolicy: a Policy that fails Validate. Wrapped with the reason.
var ErrBadPolicy = errors.New("backend: bad policy")

// ErrPolicyUnsupported: the store does not implement policies yet (see NoPolicies).
var ErrPolicyUnsupported = errors.New("backend: policies not supported by this store")

// ExpireAction is what ExpireAfter does to an expired job.
type ExpireAction string

// The expire actions. The zero value means ExpireDelete.
const (
	ExpireDelete ExpireAction = "delete"
	ExpireBury   ExpireAction = "bury"
)

// Policy is one tube policy. A zero field sets no limit.
type Policy struct {
	Tube          string // a tube name or a glob with '*'
	MaxReserves   uint32
	ExpireAfter   time.Duration
	ExpireAction  ExpireAction // "" or ExpireDelete: delete; ExpireBury: bury
	MaxReserved   uint32
	Rate          float64 // reserves per second
	Burst         uint32  // the bucket's size; 0 means 1; only with Rate
	Unique        bool
	RetryDelay    time.Duration // the first backoff; doubles with each reservation
	RetryDelayMax time.Duration // the longest backoff; 0: MaxRetryDelay
	History       bool          // keep each job's history (see Histories)
}

// MaxRetryDelay bounds RetryDelay and RetryDelayMax, and is the backoff's cap when
// RetryDelayMax is unset: the longest delay the protocol lets a client give (2^32−1 s).
const MaxRetryDelay = (1<<32 - 1) * time.Second

// MaxPolicyTubeLen bounds a pattern as the protocol bounds tube names.
const MaxPolicyTubeLen = 200

// Validate checks p, answering ErrBadPolicy wrapped with the reason.
func (p Policy) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadPolicy, fmt.Sprintf(format, a...))
	}
	if p.Tube == "" || len(p.Tube) > MaxPolicyTubeLen {
		return bad("tube must be 1..%d characters", MaxPolicyTubeLen)
	}
	for i := 0; i < len(p.Tube); i++ {
		c := p.Tube[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-+/;.$_()*", c) >= 0) {
			return bad("tube %q: %q is neither a tube name character nor '*'", p.Tube, c)
		}
	}
	if p.Tube[0] == '-' {
		return bad("tube %q starts with '-'", p.Tube)
	}
	if p.ExpireAfter < 0 {
		return bad("expire-after %v is negative", p.ExpireAfter)
	}
	switch p.ExpireAction {
	case "", ExpireDelete, ExpireBury:
	default:
		return bad("expire-action %q is neither delete nor bury", p.ExpireAction)
	}
	if p.ExpireAction != "" && p.ExpireAfter == 0 {
		return bad("expire-action without expire-after")
	}
	if p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0) {
		return bad("rate %v is not a finite number >= 0", p.Rate)
	}
	if p.Burst > 0 && p.Rate == 0 {
		return bad("burst without rate")
	}
	if p.RetryDelay < 0 || p.RetryDelay > MaxRetryDelay {
		return bad("retry-delay %v is not within 0..%v", p.RetryDelay, MaxRetryDelay)
	}
	if p.RetryDelayMax < 0 || p.RetryDelayMax > MaxRetryDelay {
		return bad("retry-delay-max %v is not within 0..%v", p.RetryDelayMax, MaxRetryDelay)
	}
	if p.RetryDelayMax > 0 && p.RetryDelay == 0 {
		return bad("retry-delay-max without retry-delay")
	}
	if p.RetryDelayMax > 0 && p.RetryDelayMax < p.RetryDelay {
		return bad("retry-delay-max %v is below retry-delay %v", p.RetryDelayMax, p.RetryDelay)
	}
	return nil
}

// Action returns the expire action in effect: ExpireDelete when unset.
func (p Policy) Action() ExpireAction {
	if p.ExpireAction == "" {
		return ExpireDelete
	}
	return p.ExpireAction
}

// RetryBackoff is how long a job of the tube that came back after its reserves-th reservation
// is delayed: RetryDelay × 2^(reserves−1), at most RetryDelayMax (MaxRetryDelay when unset);
// 0 without RetryDelay. Every store computes the same (in its own time unit).
func (p Policy) RetryBackoff(reserves uint32) time.Duration {
	if p.RetryDelay <= 0 {
		return 0
	}
	limit := p.RetryDelayMax
	if limit == 0 {
		limit = MaxRetryDelay
	}
	d := p.RetryDelay
	for n := uint32(1); n < reserves && d < limit; n++ {
		d *= 2 // d <= MaxRetryDelay < 2^62 ns before each doubling: no overflow
	}
	return min(d, limit)
}

// BucketSize is the rate limit's burst in effect: Burst, or 1 when unset.
func (p Policy) BucketSize() uint32 { return max(p.Burst, 1) }

// Limits reports whether p sets anything at all (a policy setting nothing still shadows
// broader globs).
func (p Policy) Limits() bool {
	return p.MaxReserves > 0 || p.ExpireAfter > 0 || p.MaxReserved > 0 || p.Rate > 0 || p.Unique ||
		p.RetryDelay > 0 || p.History
}

// IsGlob reports whether pattern has a wildcard.
func IsGlob(pattern string) bool { return strings.IndexByte(pattern, '*') >= 0 }

// GlobMatch reports whether tube matches pattern, where '*' matches any run of characters
// (empty included) and every other character itself.
func GlobMatch(pattern, tube string) bool {
	// Classic greedy matching with one backtrack point: linear in practice.
	p, t := 0, 0
	star, mark := -1, 0
	for t < len(tube) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, t
			p++
		case p < len(pattern) && pattern[p] == tube[t]:
			p++
			t++
		case star >= 0:
			p = star + 1
			mark++
			t = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// moreSpecific orders patterns from the most specific: an exact name first, then more literal
// characters, then fewer stars, then by the pattern itself so that the order is total.
func moreSpecific(a, b string) int {
	ga, gb := IsGlob(a), IsGlob(b)
	if ga != gb {
		if !ga {
			return -1
		}
		return 1
	}
	sa, sb := strings.Count(a, "*"), strings.Count(b, "*")
	if c := cmp.Compare(len(b)-sb, len(a)-sa); c != 0 {
		return c
	}
	if c := cmp.Compare(sa, sb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// MatchPolicy returns the policy of ps that governs tube: the one keyed tube exactly, else
// the matching glob with the most literal characters (then the fewest '*', then the smallest
// pattern). ok is false when none matches. Every store decides with this one function.
func MatchPolicy(ps []Policy, tube string) (p Policy, ok bool) {
	best := -1
	for i := range ps {
		if ps[i].Tube != tube && !(IsGlob(ps[i].Tube) && GlobMatch(ps[i].Tube, tube)) {
			continue
		}
		if best < 0 || moreSpecific(ps[i].Tube, ps[best].Tube) < 0 {
			best = i
		}
	}
	if best < 0 {
		return Policy{}, false
	}
	return ps[best], true
}

// SortPolicies sorts ps by Tube, the order ListPolicies returns.
func SortPolicies(ps []Policy) {
	slices.SortFunc(ps, func(a, b Policy) int { return strings.Compare(a.Tube, b.Tube) })
}

// The policy names and actions of PolicyAction (the metric's labels).
const (
	PolicyMaxReserves = "max-reserves"
	PolicyExpireAfter = "expire-after"
	PolicyMaxReserved = "max-reserved"
	PolicyRate        = "rate"
	PolicyUnique      = "unique"
	PolicyRetryDelay  = "retry-delay"

	ActionBury   = "bury"   // max-reserves, expire-after with bury
	ActionDelete = "delete" // expire-after with delete
	ActionDefer  = "defer"  // max-reserved, rate: a reserve passed over the tube's ready job
	ActionDedupe = "dedupe" // unique: a put answered with an existing job
	ActionDelay  = "delay"  // retry-delay: a job that came back was delayed by its backoff
)

// PolicyAction is one thing a policy did.
type PolicyAction struct {
	Tube   string // the job's tube
	Policy string // PolicyMaxReserves, ...
	Action string // ActionBury, ...
	Job    uint64 // the job acted on (dedupe: the existing job); 0 for defer
}

// NoPolicies is embedded by a store that has no policies yet: every call answers
// ErrPolicyUnsupported, and there are no actions to observe.
type NoPolicies struct{}

// SetPolicy answers ErrPolicyUnsupported.
func (NoPolicies) SetPolicy(context.Context, Policy) error { return ErrPolicyUnsupported }

// Policy answers ErrPolicyUnsupported.
func (NoPolicies) Policy(context.Context, string) (Policy, error) {
	return Policy{}, ErrPolicyUnsupported
}

// ListPolicies answers ErrPolicyUnsupported.
func (NoPolicies) ListPolicies(context.Context) ([]Policy, error) {
	return nil, ErrPolicyUnsupported
}

// ClearPolicy answers ErrPolicyUnsupported.
func (NoPolicies) ClearPolicy(context.Context, string) error { return ErrPolicyUnsupported }

// ObservePolicyActions does nothing: there are no actions.
func (NoPolicies) ObservePolicyActions(func(PolicyAction)) {}
