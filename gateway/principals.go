package gateway

import (
	"bytes"
	"context"
	"crypto/tls"

	"github.com/beangate/beangate/backend"
)

// connAccess is a connection's identity under Config.Access: its principal as of the Access it
// last looked at, and its tenant, which does not change while its session lives in the
// tenant's store.
type connAccess struct {
	name   string  // the principal's name; "" until the connection authenticates
	access *Access // the Access p was looked up in
	p      *principal
	tenant *tenantState
	// mine maps the jobs this connection reserved to their tubes: their delete, release,
	// bury and touch need the reserve grant, not manage. Bounded by maxMine.
	mine map[uint64]string
}

// maxMine bounds connAccess.mine; a reservation beyond it is checked as another's job.
const maxMine = 10000

// nobody holds no grant: a connection whose principal was removed, or moved to another tenant,
// until it reconnects.
var nobody = &principal{}

// authRequired reports whether a connection must authenticate before its first command: with
// token auth on, or with principals and no anonymous access.
func (s *Server) authRequired() bool {
	if a := s.access.Load(); a != nil {
		return a.anonymous == nil
	}
	return s.cfg.Auth != nil
}

// identify gives a new connection its principal: the one its client certificate names, else the
// anonymous one if there is one; else it has none until it authenticates.
func (c *conn) identify(a *Access) {
	c.acl = &connAccess{mine: map[uint64]string{}}
	if tc, ok := c.nc.(*tls.Conn); ok {
		if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
			if p := a.bySubject[certs[0].Subject.String()]; p != nil {
				c.become(a, p)
				c.authed = true
				return
			}
		}
	}
	if a.anonymous != nil {
		c.become(a, a.anonymous)
		c.authed = true
	}
}

// become makes p the connection's principal, in p's tenant. A connection whose session has
// begun in another tenant's store ends it first (an anonymous connection that authenticates):
// its tubes and reservations belong to that store, so it starts afresh, using and watching
// default.
func (c *conn) become(a *Access, p *principal) {
	acl := c.acl
	ts := c.srv.tenants.get(p.tenant)
	if acl.tenant != nil && acl.tenant != ts && c.begun {
		ctx, cancel := context.WithTimeout(context.Background(), c.srv.cfg.BackendTimeout)
		if err := c.store.EndSession(ctx, c.sid); err != nil {
			c.srv.failures.Failed("ending session failed; its reservations return when the backend ends it, at the latest at their TTR", err, "session", c.sid)
		}
		cancel()
		c.begun = false
		c.use, c.watch = backend.DefaultTube, []string{backend.DefaultTube}
		clear(acl.mine)
	}
	acl.name, acl.access, acl.p, acl.tenant = p.name, a, p, ts
	c.store = ts.store
	c.countIn(ts.stats)
}

// countIn moves the connection's figures to its new tenant's set: a tenant's stats show its
// own connections only. A connection that enters a tenant counts in its total-connections.
func (c *conn) countIn(to *serverStats) {
	from := c.ctr
	if from == to {
		return
	}
	c.ctr = to
	if !c.counted {
		return
	}
	from.connections.Add(-1)
	to.connections.Add(1)
	to.totalConnections.Add(1)
	if c.producer {
		from.producers.Add(-1)
		to.producers.Add(1)
	}
	if c.worker {
		from.workers.Add(-1)
		to.workers.Add(1)
	}
}

// refresh looks the principal up again when the Access has been replaced: a principal removed,
// or moved to another tenant, holds nothing from the next command on.
func (acl *connAccess) refresh(a *Access) {
	if a == acl.access || acl.name == "" {
		return
	}
	acl.access = a
	p := a.lookup(acl.name)
	if p == nil || p.tenant != acl.tenant.name {
		p = nobody
	}
	acl.p = p
}

// checkToken answers "auth <token>" under Config.Access: the token's principal, if any, becomes
// the connection's.
func (c *conn) checkToken(token []byte) bool {
	a := c.srv.access.Load()
	p := a.byTokenValue(token)
	if p == nil {
		return false
	}
	c.become(a, p)
	return true
}

// reauthenticate answers "auth <token>" on a connection that is already someone (anonymous, or
// another principal): as the first auth does, AUTHENTICATED, or UNAUTHORIZED and the end of the
// connection for a token no principal holds.
func (c *conn) reauthenticate(line []byte) bool {
	c.cmdID = commandAuth
	token := bytes.TrimPrefix(line, []byte("auth "))
	if !c.checkToken(token) {
		c.srv.stats.rejected[RejectAuthFailed].Add(1)
		c.reply(msgUnauthorized)
		return false
	}
	c.reply(msgAuthenticated)
	c.ensureSession()
	return true
}

// Caller is a principal as an HTTP API (the console's) serves it: what it may do, and the store
// of its tenant.
type Caller struct {
	p      *principal
	Store  backend.Backend
	tenant *tenantState
}

// Waiting is how many of the caller's tenant's connections wait in a reserve on tube
// (stats-tube's current-waiting).
func (c *Caller) Waiting(tube string) int64 { return c.tenant.stats.tubeWaiting(tube) }

// On is the set of grants the caller holds on tube.
func (c *Caller) On(tube string) Grant { return c.p.on(tube) }

// View is what the caller may be told about itself.
func (c *Caller) View() PrincipalView { return c.p.view() }

// CallerByToken is the principal holding token (nil: the anonymous one), as the Access in use
// now has it; false for none, or a Server without Access.
func (s *Server) CallerByToken(token []byte) (*Caller, bool) {
	a := s.access.Load()
	if a == nil {
		return nil, false
	}
	p := a.anonymous
	if token != nil {
		p = a.byTokenValue(token)
	}
	if p == nil {
		return nil, false
	}
	ts := s.tenants.get(p.tenant)
	return &Caller{p: p, Store: ts.store, tenant: ts}, true
}
