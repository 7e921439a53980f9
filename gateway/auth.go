package gateway

import (
	"bytes"
	"errors"
	"net"
	"time"
)

// authenticate answers a line of a connection that has not authenticated yet (Config.Auth set):
// "auth <token>" with an accepted token answers AUTHENTICATED and opens the protocol; quit
// closes; anything else, a wrong token included, answers UNAUTHORIZED and closes. A put's body
// is not read: the connection closes before it.
func (c *conn) authenticate(line []byte) (keepOpen bool) {
	c.cmdID = commandUnknown
	token, isAuth := bytes.CutPrefix(line, []byte("auth "))
	switch {
	case isAuth:
		c.cmdID = commandAuth
	case bytes.HasPrefix(line, []byte("quit")):
		return false
	}
	if isAuth && c.tokenAccepted(token) {
		c.authed = true
		_ = c.nc.SetReadDeadline(time.Time{}) // the handshake timeout no longer applies
		c.passGate()
		c.reply(msgAuthenticated)
		c.observeAuth(ResultOK)
		c.ensureSession()
		return true
	}
	c.srv.stats.rejected[RejectAuthFailed].Add(1)
	c.reply(msgUnauthorized)
	c.observeAuth(ResultUnauthorized)
	return false
}

// tokenAccepted checks an auth token: against the principals' under Config.Access, else with
// Config.Auth.
func (c *conn) tokenAccepted(token []byte) bool {
	if c.acl != nil {
		return c.checkToken(token)
	}
	return c.srv.cfg.Auth(token)
}

func (c *conn) observeAuth(res Result) {
	if obs := c.srv.obs; obs != nil {
		obs.CommandDone(c.cmdID, res, 0)
	}
}

// authTimedOut handles the read error of a connection that has not authenticated: past the
// handshake timeout it answers UNAUTHORIZED before it closes, so the client learns why.
func (c *conn) authTimedOut(err error) {
	var ne net.Error
	if c.stopping.Load() || !errors.As(err, &ne) || !ne.Timeout() {
		return
	}
	c.srv.stats.rejected[RejectAuthTimeout].Add(1)
	c.reply(msgUnauthorized)
}

// passGate takes the connection out of the handshaking count, once.
func (c *conn) passGate() {
	if c.gated {
		c.gated = false
		c.srv.handshaking.Add(-1)
	}
}
