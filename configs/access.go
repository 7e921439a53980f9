package configs

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/beangate/beangate/gateway"
)

// Principal is one entry of auth.principals (docs/security.md): a named identity, proved by a
// token from its token_file or by a client certificate's subject, with its grants and tenant.
type Principal struct {
	Name        string  `mapstructure:"name"`
	TokenFile   string  `mapstructure:"token_file"`   // one token a line, as auth.token_file
	CertSubject string  `mapstructure:"cert_subject"` // e.g. "CN=billing-app"
	Tenant      string  `mapstructure:"tenant"`       // empty: the main store
	Grants      []Grant `mapstructure:"grants"`
}

// Grant allows some of put, reserve, inspect and manage in the tubes matching its patterns.
type Grant struct {
	Tubes []string `mapstructure:"tubes"` // names, or globs with '*' as tube policies take them
	Allow []string `mapstructure:"allow"`
}

// Anonymous is auth.anonymous: what a connection that proves no identity may do.
type Anonymous struct {
	Tenant string  `mapstructure:"tenant"`
	Grants []Grant `mapstructure:"grants"`
}

// Tenant is one entry of auth.tenants: a namespace of its own in the store, and its quotas.
type Tenant struct {
	Name string `mapstructure:"name"`
	// Namespace is the tenant's Redis key prefix, PostgreSQL schema, or memory engine (its
	// binlog in a directory of that name under binlog.dir).
	Namespace string  `mapstructure:"namespace"`
	MaxJobs   int64   `mapstructure:"max_jobs"`  // 0: no limit
	MaxBytes  string  `mapstructure:"max_bytes"` // bytes, or with a unit: 256MiB, 1GB; empty or 0: no limit
	PutRate   float64 `mapstructure:"put_rate"`  // puts a second per gateway, burst as many; 0: no limit
}

// HasPrincipals reports whether grants are checked: principals, anonymous access or tenants are
// configured.
func (a *Auth) HasPrincipals() bool {
	return len(a.Principals) > 0 || a.Anonymous != nil || len(a.Tenants) > 0
}

// Bytes is MaxBytes in bytes (validated).
func (t Tenant) Bytes() uint64 {
	n, _ := parseBytes(t.MaxBytes)
	return n
}

// GatewayGrants turns grants into the gateway's (validated: every name is known).
func GatewayGrants(gs []Grant) []gateway.TubeGrant {
	out := make([]gateway.TubeGrant, 0, len(gs))
	for _, g := range gs {
		var allow gateway.Grant
		for _, name := range g.Allow {
			one, _ := gateway.ParseGrant(name)
			allow |= one
		}
		out = append(out, gateway.TubeGrant{Tubes: g.Tubes, Allow: allow})
	}
	return out
}

// validateAccess checks auth.principals, auth.anonymous and auth.tenants; token files are read
// (and tokens shared by two principals found) when the gateway is configured from them.
func (f *Fleet) validateAccess(bad func(string, ...any)) {
	a := &f.Auth
	tenants := map[string]bool{}
	namespaces := map[string]string{}
	for i, t := range a.Tenants {
		what := fmt.Sprintf("auth.tenants[%d] (%q)", i, t.Name)
		switch {
		case t.Name == "":
			bad("auth.tenants[%d]: name must be set", i)
		case tenants[t.Name]:
			bad("%s: the name is given twice", what)
		}
		tenants[t.Name] = true
		switch {
		case t.Namespace == "":
			bad("%s: namespace must be set (its Redis prefix, PostgreSQL schema or memory engine)", what)
		case strings.ContainsAny(t.Namespace, "{}/\\ \t"):
			bad("%s: namespace %q: letters, digits, '-', '_' and '.' only", what, t.Namespace)
		case namespaces[t.Namespace] != "":
			bad("%s: namespace %q is also tenant %q's", what, t.Namespace, namespaces[t.Namespace])
		default:
			namespaces[t.Namespace] = t.Name
		}
		if t.MaxJobs < 0 {
			bad("%s: max_jobs %d: must not be negative", what, t.MaxJobs)
		}
		if t.PutRate < 0 || math.IsNaN(t.PutRate) || math.IsInf(t.PutRate, 0) {
			bad("%s: put_rate %v: must be a positive number of puts a second, or 0", what, t.PutRate)
		}
		if _, err := parseBytes(t.MaxBytes); err != nil {
			bad("%s: max_bytes: %v", what, err)
		}
	}
	names := map[string]bool{}
	subjects := map[string]string{}
	files := map[string]string{}
	for i, p := range a.Principals {
		what := fmt.Sprintf("auth.principals[%d] (%q)", i, p.Name)
		switch {
		case p.Name == "":
			bad("auth.principals[%d]: name must be set", i)
		case p.Name == gateway.AnonymousName:
			bad("%s: the name is kept for auth.anonymous", what)
		case names[p.Name]:
			bad("%s: overlapping principals: the name is given twice", what)
		}
		names[p.Name] = true
		if p.TokenFile == "" && p.CertSubject == "" {
			bad("%s: give token_file, cert_subject or both: nobody could be this principal", what)
		}
		if other := files[p.TokenFile]; p.TokenFile != "" && other != "" {
			bad("%s: overlapping principals: token_file %s is also principal %q's", what, p.TokenFile, other)
		} else if p.TokenFile != "" {
			files[p.TokenFile] = p.Name
		}
		if other := subjects[p.CertSubject]; p.CertSubject != "" && other != "" {
			bad("%s: overlapping principals: cert_subject %q is also principal %q's", what, p.CertSubject, other)
		} else if p.CertSubject != "" {
			subjects[p.CertSubject] = p.Name
			if f.TLS.ClientCA == "" {
				bad("%s: cert_subject needs tls.client_ca: without it no client presents a certificate", what)
			}
		}
		if p.Tenant != "" && !tenants[p.Tenant] {
			bad("%s: tenant %q is not in auth.tenants", what, p.Tenant)
		}
		validateGrants(what, p.Grants, bad)
	}
	if an := a.Anonymous; an != nil {
		if an.Tenant != "" && !tenants[an.Tenant] {
			bad("auth.anonymous: tenant %q is not in auth.tenants", an.Tenant)
		}
		validateGrants("auth.anonymous", an.Grants, bad)
	}
}

func validateGrants(what string, gs []Grant, bad func(string, ...any)) {
	for j, g := range gs {
		if len(g.Tubes) == 0 {
			bad("%s: grants[%d]: tubes must name at least one tube or pattern", what, j)
		}
		for _, t := range g.Tubes {
			if t == "" || len(t) > 200 {
				bad("%s: grants[%d]: tube pattern %q: 1..200 characters", what, j, t)
			}
		}
		if len(g.Allow) == 0 {
			bad("%s: grants[%d]: allow must list at least one of %s", what, j, strings.Join(gateway.GrantNames(), ", "))
		}
		for _, name := range g.Allow {
			if _, ok := gateway.ParseGrant(name); !ok {
				bad("%s: grants[%d]: unknown grant %q (want %s)", what, j, name, strings.Join(gateway.GrantNames(), ", "))
			}
		}
	}
}

// byteUnits are the units max_bytes takes, longest first so that "MiB" is not read as "B".
var byteUnits = []struct {
	suffix string
	n      uint64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// parseBytes reads "268435456", "256MiB", "1GB"; empty is 0.
func parseBytes(s string) (uint64, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	mult := uint64(1)
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.n
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > math.MaxUint64/mult {
		return 0, fmt.Errorf("%q: want a whole number of bytes, with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB if any", orig)
	}
	return n * mult, nil
}
