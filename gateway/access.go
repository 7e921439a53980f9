package gateway

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/beangate/beangate/backend"
)

// Grant is what a principal may do in the tubes a TubeGrant names; a set of them is a bit set.
type Grant uint8

// The grants (docs/security.md).
const (
	// GrantPut: use and put.
	GrantPut Grant = 1 << iota
	// GrantReserve: watch and reserve, and delete, release, bury and touch of the jobs the
	// connection reserved.
	GrantReserve
	// GrantInspect: peek, stats-job, stats-tube, and seeing the tube in list-tubes.
	GrantInspect
	// GrantManage: kick, kick-job, pause-tube, and delete of jobs the connection did not reserve.
	GrantManage
	grantAll = GrantPut | GrantReserve | GrantInspect | GrantManage
)

var grantNames = [...]struct {
	name  string
	grant Grant
}{{"put", GrantPut}, {"reserve", GrantReserve}, {"inspect", GrantInspect}, {"manage", GrantManage}}

// ParseGrant reads one grant's name as the configuration spells it.
func ParseGrant(name string) (Grant, bool) {
	for _, g := range grantNames {
		if g.name == name {
			return g.grant, true
		}
	}
	return 0, false
}

// GrantNames lists the grants' names, in the configuration's spelling.
func GrantNames() []string {
	names := make([]string, len(grantNames))
	for i, g := range grantNames {
		names[i] = g.name
	}
	return names
}

// Names lists the grants in g.
func (g Grant) Names() []string {
	var names []string
	for _, n := range grantNames {
		if g&n.grant != 0 {
			names = append(names, n.name)
		}
	}
	return names
}

func (g Grant) String() string { return strings.Join(g.Names(), ",") }

// TubeGrant allows some grants in the tubes matching any of its patterns (names, or globs with
// '*' as tube policies take them).
type TubeGrant struct {
	Tubes []string
	Allow Grant
}

// Principal is a named identity: what it may do, in which tenant, and how a connection proves
// it is this principal (a token, a client certificate's subject, or both).
type Principal struct {
	Name   string
	Tenant string // "": the main store
	Grants []TubeGrant
	// TokenHashes are the SHA-256 of the tokens "auth <token>" accepts for it (HashToken).
	TokenHashes [][sha256.Size]byte
	CertSubject string // a client certificate's subject, as x509's Name.String() spells it
}

// Tenant is a namespace of its own in the store, and its quotas (0: none).
type Tenant struct {
	Name string
	// Store is the tenant's namespace; a Server needs it set (NewAccess does not, so that a
	// configuration can be checked before any store is open).
	Store    backend.Backend
	MaxJobs  uint64  // jobs kept: ready, delayed, buried and reserved
	MaxBytes uint64  // their bodies' bytes (an estimate: see quota.go)
	PutRate  float64 // puts a second through this gateway, with a burst of as many
}

// AccessConfig is what NewAccess reads.
type AccessConfig struct {
	Principals []Principal
	// Anonymous is what a connection that proves no identity may do; nil: it must
	// authenticate. Its Name, Tokens and CertSubject are not used.
	Anonymous *Principal
	Tenants   []Tenant
}

// AnonymousName names the anonymous principal in logs, metrics and whoami.
const AnonymousName = "anonymous"

// Access is who may connect and what each may do. It does not change once made: a Server's
// is replaced whole (Server.SetAccess, on SIGHUP), and each connection looks its principal up
// again by name before its next command.
type Access struct {
	byName    map[string]*principal
	byToken   map[[sha256.Size]byte]*principal
	bySubject map[string]*principal
	anonymous *principal // nil: a connection must authenticate
	tenants   map[string]*Tenant
}

// principal is a Principal as a connection uses it: no credentials kept.
type principal struct {
	name   string
	tenant string
	grants []TubeGrant
}

// on is the set of grants p holds on tube.
func (p *principal) on(tube string) Grant {
	var g Grant
	for i := range p.grants {
		tg := &p.grants[i]
		if g&tg.Allow == tg.Allow {
			continue
		}
		for _, pattern := range tg.Tubes {
			if backend.GlobMatch(pattern, tube) {
				g |= tg.Allow
				break
			}
		}
	}
	return g
}

// NewAccess checks cfg and compiles it. Two principals may not share a name, a token or a
// certificate subject, and each tenant named must be configured.
func NewAccess(cfg AccessConfig) (*Access, error) {
	a := &Access{
		byName:    map[string]*principal{},
		byToken:   map[[sha256.Size]byte]*principal{},
		bySubject: map[string]*principal{},
		tenants:   map[string]*Tenant{},
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for i := range cfg.Tenants {
		t := &cfg.Tenants[i]
		if _, dup := a.tenants[t.Name]; dup {
			bad("tenant %q is configured twice", t.Name)
		}
		a.tenants[t.Name] = t
	}
	compile := func(p *Principal, what string) *principal {
		if p.Tenant != "" && a.tenants[p.Tenant] == nil {
			bad("%s: tenant %q is not configured", what, p.Tenant)
		}
		for _, g := range p.Grants {
			if g.Allow == 0 || g.Allow&^grantAll != 0 {
				bad("%s: a grant allows nothing known", what)
			}
		}
		return &principal{name: p.Name, tenant: p.Tenant, grants: p.Grants}
	}
	for i := range cfg.Principals {
		p := &cfg.Principals[i]
		what := fmt.Sprintf("principal %q", p.Name)
		if p.Name == "" || p.Name == AnonymousName {
			bad("principals[%d]: name %q is not allowed", i, p.Name)
		}
		if _, dup := a.byName[p.Name]; dup {
			bad("%s: the name is given twice", what)
		}
		c := compile(p, what)
		a.byName[p.Name] = c
		if len(p.TokenHashes) == 0 && p.CertSubject == "" {
			bad("%s: no token and no cert_subject: nobody could be it", what)
		}
		for _, h := range p.TokenHashes {
			if other, dup := a.byToken[h]; dup && other != c {
				bad("%s: a token is also principal %q's", what, other.name)
			}
			a.byToken[h] = c
		}
		if s := p.CertSubject; s != "" {
			if other, dup := a.bySubject[s]; dup {
				bad("%s: cert_subject %q is also principal %q's", what, s, other.name)
			}
			a.bySubject[s] = c
		}
	}
	if cfg.Anonymous != nil {
		anon := *cfg.Anonymous
		anon.Name = AnonymousName
		a.anonymous = compile(&anon, "anonymous")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return a, nil
}

// HashToken is a token as Principal.TokenHashes holds it.
func HashToken(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// byTokenValue finds the principal whose token this is. Tokens are looked up by their SHA-256:
// the map's timing tells nothing usable about a token.
func (a *Access) byTokenValue(token []byte) *principal {
	return a.byToken[sha256.Sum256(token)]
}

// lookup is the principal named name now (the anonymous one for AnonymousName), or nil.
func (a *Access) lookup(name string) *principal {
	if name == AnonymousName {
		return a.anonymous
	}
	return a.byName[name]
}

// Tenants lists the configured tenants.
func (a *Access) Tenants() []Tenant {
	ts := make([]Tenant, 0, len(a.tenants))
	for _, t := range a.tenants {
		ts = append(ts, *t)
	}
	return ts
}

// PrincipalView is what a caller may be told about its own principal.
type PrincipalView struct {
	Name   string      `json:"name"`
	Tenant string      `json:"tenant,omitempty"`
	Grants []GrantView `json:"grants"`
}

// GrantView is one TubeGrant, its grants by name.
type GrantView struct {
	Tubes []string `json:"tubes"`
	Allow []string `json:"allow"`
}

func (p *principal) view() PrincipalView {
	v := PrincipalView{Name: p.name, Tenant: p.tenant, Grants: []GrantView{}}
	for _, g := range p.grants {
		v.Grants = append(v.Grants, GrantView{Tubes: g.Tubes, Allow: g.Allow.Names()})
	}
	return v
}
