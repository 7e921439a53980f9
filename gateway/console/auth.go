package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// Auth is who may use the console: Basic Auth as User with the password whose bcrypt hash is
// PasswordHash, and/or any token Token accepts (the beanstalk listener's --auth-token-file), as
// a Bearer token or as a Basic Auth password. With neither, the console's pages and reads are
// open and every action is refused: anyone who reaches the ops listener could otherwise flush a
// tube.
type Auth struct {
	User         string
	PasswordHash string
	Token        func(token []byte) bool
}

// Required reports whether a is configured: requests must then carry its credentials, and
// actions are allowed.
func (a Auth) Required() bool { return a.PasswordHash != "" || a.Token != nil }

// allows checks a request's credentials and names who they are for the log: the Basic Auth
// user, "token" for a token (never the token itself), "anonymous" without authentication. bcrypt
// is slow on purpose (tens of ms): the page's one-second polling pays it once per request, which
// is acceptable on an operator's console.
func (a Auth) allows(r *http.Request) (who string, ok bool) {
	if !a.Required() {
		return "anonymous", true
	}
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return "token", a.Token != nil && a.Token([]byte(strings.TrimPrefix(h, "Bearer ")))
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return "", false
	}
	if a.PasswordHash != "" && subtle.ConstantTimeCompare([]byte(user), []byte(a.User)) == 1 &&
		bcrypt.CompareHashAndPassword([]byte(a.PasswordHash), []byte(pass)) == nil {
		return a.User, true
	}
	return "token", a.Token != nil && a.Token([]byte(pass))
}

// whoKey carries who passed the guard to the handlers, for the action log.
type whoKey struct{}

// whoOf is who passed the guard for r.
func whoOf(r *http.Request) string {
	who, _ := r.Context().Value(whoKey{}).(string)
	return who
}

// guard serves nothing, not even the page's files, to a request without valid credentials.
func (c *Console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		who, ok := c.opts.Auth.allows(r)
		if ok {
			r, ok = c.withCaller(r, who)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="beangate console", charset="UTF-8"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), whoKey{}, who)))
	})
}

// csrfHeader carries the CSRF token on every action. The page reads the token from /api/info,
// which another site's page cannot read (same-origin policy, no CORS), and a cross-site form
// cannot set a header; an Origin other than the console's own is refused as well.
const csrfHeader = "X-CSRF-Token"

func newCSRFToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// actionsOff says why actions are refused, or "" when they are allowed. Without authentication
// a request cannot be told from anyone else's who reaches the port, so actions need it.
func (c *Console) actionsOff() string {
	switch {
	case c.opts.ReadOnly:
		return "the console is read-only (--console-read-only)"
	case !c.opts.Auth.Required():
		return "no authentication is configured (set --console-password-hash or --auth-token-file to turn them on)"
	}
	return ""
}

// action wraps a handler that changes the store: refused while actions are off and without the
// CSRF token.
func (c *Console) action(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := c.actionsOff(); why != "" {
			c.logAction(r, nil, "refused", "actions are off")
			writeError(w, http.StatusForbidden, "actions are off: "+why)
			return
		}
		if !hmac.Equal([]byte(r.Header.Get(csrfHeader)), []byte(c.csrf)) || !sameOrigin(r) {
			c.logAction(r, nil, "refused", "missing or wrong CSRF token")
			writeError(w, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		next(w, r)
	})
}

// sameOrigin accepts a request without an Origin (ctl, curl) or from the console's own host.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}
