package configs

import (
	"math"
	"time"

	"github.com/beangate/beangate/backend"
)

// Policy is one entry of the policies: section, applied to the store at start (see
// docs/policies.md). Its keys are those of `beangate ctl policy set`, with underscores.
type Policy struct {
	Tube         string        `mapstructure:"tube"` // a tube name or a glob with '*'
	MaxReserves  int           `mapstructure:"max_reserves"`
	ExpireAfter  time.Duration `mapstructure:"expire_after"`
	ExpireAction string        `mapstructure:"expire_action"` // delete (the default) or bury
	MaxReserved  int           `mapstructure:"max_reserved"`
	Rate         float64       `mapstructure:"rate"` // reserves per second, fleet-wide
	Burst        int           `mapstructure:"burst"`
	Unique       bool          `mapstructure:"unique"`
	RetryDelay   time.Duration `mapstructure:"retry_delay"`     // the first backoff of a job that comes back
	RetryMax     time.Duration `mapstructure:"retry_delay_max"` // the longest backoff
	History      bool          `mapstructure:"history"`         // keep each job's events
}

// Backend is p as the store takes it.
func (p Policy) Backend() backend.Policy {
	return backend.Policy{
		Tube:          p.Tube,
		MaxReserves:   uint32(p.MaxReserves), // validated: in range
		ExpireAfter:   p.ExpireAfter,
		ExpireAction:  backend.ExpireAction(p.ExpireAction),
		MaxReserved:   uint32(p.MaxReserved),
		Rate:          p.Rate,
		Burst:         uint32(p.Burst),
		Unique:        p.Unique,
		RetryDelay:    p.RetryDelay,
		RetryDelayMax: p.RetryMax,
		History:       p.History,
	}
}

// validatePolicies checks every entry as the store would, and that no tube appears twice.
func validatePolicies(ps []Policy, bad func(string, ...any)) {
	seen := map[string]bool{}
	for i, p := range ps {
		// Counts are ints here, not the store's uint32, so that -1 is refused, not wrapped.
		for _, n := range []struct {
			key string
			v   int
		}{{"max_reserves", p.MaxReserves}, {"max_reserved", p.MaxReserved}, {"burst", p.Burst}} {
			if n.v < 0 || n.v > math.MaxUint32 {
				bad("policies[%d]: %s %d: must be 0..%d", i, n.key, n.v, uint32(math.MaxUint32))
			}
		}
		if err := p.Backend().Validate(); err != nil {
			bad("policies[%d]: %v", i, err)
			continue
		}
		if seen[p.Tube] {
			bad("policies[%d]: tube %q appears twice", i, p.Tube)
		}
		seen[p.Tube] = true
	}
}
