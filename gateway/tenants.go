package gateway

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/beangate/beangate/backend"
)

// tenantStates holds a Server's tenants by name, "" being the main store (Config.Backend): each
// tenant's store, quota state and counters. A tenant stays once it has been configured, for the
// connections still in it, even if a reload drops it.
type tenantStates struct {
	srv *Server
	mu  sync.Mutex
	m   map[string]*tenantState
}

// tenantState is one tenant as this gateway serves it.
type tenantState struct {
	name  string
	store backend.Backend
	quota quota
	// stats are its connections' own figures (Server.stats for the main store's).
	stats *serverStats
	// refusedByGrant counts its connections' commands refused for want of a grant.
	refusedByGrant atomic.Uint64
}

func (ts *tenantStates) init(s *Server) {
	ts.srv = s
	ts.m = map[string]*tenantState{"": {name: "", store: s.cfg.Backend, stats: s.stats}}
	s.unidentified = newServerStats()
}

// get is the tenant named name; every name an Access holds has been installed.
func (ts *tenantStates) get(name string) *tenantState {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.m[name]
}

// statsSets are the figures of every tenant but the main store's, and of the connections not
// yet authenticated.
func (ts *tenantStates) statsSets() []*serverStats {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	sets := make([]*serverStats, 0, len(ts.m))
	for name, st := range ts.m {
		if name != "" {
			sets = append(sets, st.stats)
		}
	}
	return append(sets, ts.srv.unidentified)
}

// ErrAccessToggled refuses a SetAccess that would turn principals on or off: connections made
// without principals have no identity to check, and ones made with them would keep theirs.
var ErrAccessToggled = errors.New("gateway: principals can only be turned on or off by a restart")

// SetAccess replaces the principals, grants and tenant quotas: every connection obeys a at its
// next command. A tenant new in a is served from its Store from now on.
func (s *Server) SetAccess(a *Access) error {
	if a == nil || s.access.Load() == nil {
		return ErrAccessToggled
	}
	for name, t := range a.tenants {
		if t.Store == nil {
			return fmt.Errorf("gateway: tenant %q has no store", name)
		}
	}
	s.installAccess(a)
	return nil
}

func (s *Server) installAccess(a *Access) {
	ts := &s.tenants
	ts.mu.Lock()
	for name, t := range a.tenants {
		st := ts.m[name]
		if st == nil {
			st = &tenantState{name: name, store: t.Store, stats: newServerStats()}
			ts.m[name] = st
			t.Store.ObserveLostReservations(s.closeSessions)
		}
		st.quota.setLimits(t, s.log)
	}
	ts.mu.Unlock()
	s.access.Store(a)
}

// TenantFigures are what a gateway counts of one tenant, for metrics.
type TenantFigures struct {
	Tenant         string // "" for the main store
	RefusedByGrant uint64
	RefusedByQuota map[string]uint64 // by quota: max_jobs, max_bytes, put_rate
}

// Tenants returns each tenant's figures and store, in name order; nil without Config.Access.
func (s *Server) Tenants() ([]TenantFigures, []backend.Backend) {
	if s.access.Load() == nil {
		return nil, nil
	}
	ts := &s.tenants
	ts.mu.Lock()
	states := make([]*tenantState, 0, len(ts.m))
	for _, st := range ts.m {
		states = append(states, st)
	}
	ts.mu.Unlock()
	sort.Slice(states, func(i, j int) bool { return states[i].name < states[j].name })
	figs := make([]TenantFigures, len(states))
	stores := make([]backend.Backend, len(states))
	for i, st := range states {
		figs[i] = TenantFigures{Tenant: st.name, RefusedByGrant: st.refusedByGrant.Load(), RefusedByQuota: st.quota.refusals()}
		stores[i] = st.store
	}
	return figs, stores
}
