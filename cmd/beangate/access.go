package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/configs"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/ops"
)

// tokenFilePrincipal names the tokens of auth.token_file when principals are configured too:
// they keep what they had, every grant on every tube of the main store.
const tokenFilePrincipal = "auth.token_file"

// accessConfig reads the principals' token files and builds the gateway's access settings from
// cfg, each tenant's store taken from stores (nil stores: a check of the configuration alone).
// Its errors are the configuration's; they never quote a token.
func accessConfig(cfg configs.Config, stores map[string]backend.Backend) (*gateway.Access, error) {
	a := cfg.Auth
	var ac gateway.AccessConfig
	for _, t := range a.Tenants {
		ac.Tenants = append(ac.Tenants, gateway.Tenant{
			Name: t.Name, Store: stores[t.Name], MaxJobs: uint64(t.MaxJobs), MaxBytes: t.Bytes(), PutRate: t.PutRate,
		})
	}
	for _, p := range a.Principals {
		gp := gateway.Principal{Name: p.Name, Tenant: p.Tenant, CertSubject: p.CertSubject, Grants: configs.GatewayGrants(p.Grants)}
		if p.TokenFile != "" {
			hashes, err := ops.ReadTokenHashes(p.TokenFile)
			if err != nil {
				return nil, fmt.Errorf("auth.principals %q: %w", p.Name, err)
			}
			gp.TokenHashes = hashes
		}
		ac.Principals = append(ac.Principals, gp)
	}
	if a.TokenFile != "" {
		hashes, err := ops.ReadTokenHashes(a.TokenFile)
		if err != nil {
			return nil, err
		}
		ac.Principals = append(ac.Principals, gateway.Principal{Name: tokenFilePrincipal, TokenHashes: hashes,
			Grants: []gateway.TubeGrant{{Tubes: []string{"*"}, Allow: gateway.GrantPut | gateway.GrantReserve | gateway.GrantInspect | gateway.GrantManage}}})
	}
	if an := a.Anonymous; an != nil {
		ac.Anonymous = &gateway.Principal{Tenant: an.Tenant, Grants: configs.GatewayGrants(an.Grants)}
	}
	access, err := gateway.NewAccess(ac)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return access, nil
}

// tenantStores opens the stores of cfg's tenants that open does not hold yet, each in its
// namespace of the main store, and sets the configured tube policies in each.
type tenantStores struct {
	mu     sync.Mutex
	stores map[string]backend.Backend // by tenant name; kept open until the process ends
	spaces map[string]string          // each open tenant's namespace
	log    *slog.Logger
}

func newTenantStores(log *slog.Logger) *tenantStores {
	return &tenantStores{stores: map[string]backend.Backend{}, spaces: map[string]string{}, log: log}
}

// open opens every tenant of cfg not open yet. A tenant open already must keep its namespace:
// its connections' sessions live there.
func (ts *tenantStores) open(ctx context.Context, cfg configs.Config) (map[string]backend.Backend, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range cfg.Auth.Tenants {
		if ns, ok := ts.spaces[t.Name]; ok {
			if ns != t.Namespace {
				return nil, fmt.Errorf("auth.tenants %q: its namespace cannot change while it is served (restart to move it)", t.Name)
			}
			continue
		}
		tcfg, err := tenantConfig(cfg, t.Namespace)
		if err != nil {
			return nil, fmt.Errorf("auth.tenants %q: %w", t.Name, err)
		}
		opener, _, err := storeOpener(tcfg, ts.log)
		if err != nil {
			return nil, fmt.Errorf("auth.tenants %q: %w", t.Name, err)
		}
		octx, cancel := context.WithTimeout(ctx, 3*cfg.BackendTimeout)
		store, err := opener(octx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("auth.tenants %q: opening its store: %s", t.Name, redactedError(err, tcfg.Backend))
		}
		if err := setPolicies(ctx, store, cfg.Policies, cfg.BackendTimeout); err != nil {
			_ = store.Close()
			return nil, fmt.Errorf("auth.tenants %q: tube policies: %w", t.Name, err)
		}
		ts.stores[t.Name], ts.spaces[t.Name] = store, t.Namespace
		ts.log.Info("tenant store open", "tenant", t.Name, "namespace", t.Namespace)
	}
	out := make(map[string]backend.Backend, len(ts.stores))
	for k, v := range ts.stores {
		out[k] = v
	}
	return out, nil
}

func (ts *tenantStores) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for name, s := range ts.stores {
		if err := s.Close(); err != nil {
			ts.log.Warn("closing tenant store", "tenant", name, "err", err)
		}
	}
}

// accessReloader re-reads the configuration on SIGHUP and gives the gateway its new principals,
// grants and quotas; a configuration that does not load or check is refused whole, and the one
// in use stays.
type accessReloader struct {
	load    func() (configs.Config, error)
	srv     *gateway.Server
	tenants *tenantStores
	log     *slog.Logger
}

var errAccessToggle = errors.New("auth: principals, anonymous access and tenants can only be turned on or off by a restart")

func (r *accessReloader) reload(ctx context.Context) {
	if err := r.apply(ctx); err != nil {
		r.log.Error("SIGHUP: configuration refused; the principals, grants and quotas in use stay", "err", err)
		return
	}
	r.log.Info("SIGHUP: principals, grants and quotas reloaded")
}

func (r *accessReloader) apply(ctx context.Context) error {
	cfg, err := r.load()
	if err != nil {
		return err
	}
	if !cfg.Auth.HasPrincipals() {
		return errAccessToggle
	}
	if _, err := accessConfig(cfg, nil); err != nil {
		return err // checked before any tenant store is opened
	}
	stores, err := r.tenants.open(ctx, cfg)
	if err != nil {
		return err
	}
	access, err := accessConfig(cfg, stores)
	if err != nil {
		return err
	}
	return r.srv.SetAccess(access)
}
