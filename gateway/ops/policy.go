package ops

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beangate/beangate/backend"
)

// ObservePolicyActions counts on reg (when not nil), and logs at debug level, every action the
// store's tube policies take in this process: beangate_policy_actions_total{tube,policy,action}.
// maxTubes caps the tubes with series of their own (others share tube="*other*"). log may be
// nil.
func ObservePolicyActions(reg prometheus.Registerer, store backend.Backend, maxTubes int, log *slog.Logger) {
	if reg == nil {
		if log != nil && log.Enabled(context.Background(), slog.LevelDebug) {
			store.ObservePolicyActions((&policyActions{log: log}).logAction)
		}
		return
	}
	c := &policyActions{
		vec: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "beangate_policy_actions_total",
			Help: "Actions of tube policies taken by this gateway: jobs buried (max-reserves, expire-after) or deleted (expire-after), jobs that came back delayed by their backoff (retry-delay), reserves deferred (max-reserved, rate), puts answered with an existing job (unique).",
		}, []string{"tube", "policy", "action"}),
		max:   maxTubes,
		tubes: map[string]struct{}{},
		log:   log,
	}
	reg.MustRegister(c.vec)
	store.ObservePolicyActions(c.observe)
}

type policyActions struct {
	vec   *prometheus.CounterVec
	max   int
	mu    sync.Mutex
	tubes map[string]struct{} // tubes with series of their own
	log   *slog.Logger
}

// observe runs under the store's lock: a counter and, at debug level only, a log line.
func (c *policyActions) observe(a backend.PolicyAction) {
	c.vec.WithLabelValues(c.label(a.Tube), a.Policy, a.Action).Inc()
	c.logAction(a)
}

func (c *policyActions) logAction(a backend.PolicyAction) {
	if c.log != nil && c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("tube policy acted", "tube", a.Tube, "policy", a.Policy, "action", a.Action, "job", a.Job)
	}
}

func (c *policyActions) label(tube string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tubes[tube]; ok {
		return tube
	}
	if len(c.tubes) >= c.max {
		return otherTube
	}
	c.tubes[tube] = struct{}{}
	return tube
}
