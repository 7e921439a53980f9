package migrate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/beangate/beangate/internal/beanstalk"
)

// A beanstalk endpoint is beanstalk://HOST:PORT, or beanstalks://HOST:PORT for TLS with its
// settings as query parameters: ca=FILE, cert=FILE and key=FILE, server_name=NAME. They are in
// the URL, not in flags, because --from and --to may both be beanstalk servers, each with TLS
// settings of its own; and a store URL carries its TLS the same way (rediss://,
// postgres://…?sslrootcert=).

// ErrBadURL is a --from or --to that is not a valid endpoint: a usage error.
var ErrBadURL = errors.New("bad endpoint URL")

// tlsParams maps the TLS query parameters of a beanstalks:// URL to their options.
var tlsParams = map[string]func(*beanstalk.TLSOptions) *string{
	"ca":          func(o *beanstalk.TLSOptions) *string { return &o.CA },
	"cert":        func(o *beanstalk.TLSOptions) *string { return &o.Cert },
	"key":         func(o *beanstalk.TLSOptions) *string { return &o.Key },
	"server_name": func(o *beanstalk.TLSOptions) *string { return &o.ServerName },
}

// beanstalkEndpoint is a parsed beanstalk:// or beanstalks:// URL.
type beanstalkEndpoint struct {
	addr string
	tls  beanstalk.TLSOptions
}

// IsBeanstalkURL reports whether s names a beanstalk server (beanstalk:// or beanstalks://).
func IsBeanstalkURL(s string) bool {
	return strings.HasPrefix(s, "beanstalk://") || strings.HasPrefix(s, "beanstalks://")
}

// parseBeanstalkURL parses a beanstalk endpoint; its errors wrap ErrBadURL.
func parseBeanstalkURL(s string) (beanstalkEndpoint, error) {
	bad := func(format string, args ...any) (beanstalkEndpoint, error) {
		return beanstalkEndpoint{}, fmt.Errorf("%w: %q: %s", ErrBadURL, s, fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("%v", err)
	}
	if u.Scheme != "beanstalk" && u.Scheme != "beanstalks" {
		return bad("want beanstalk://HOST:PORT or beanstalks://HOST:PORT")
	}
	if u.Host == "" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return bad("want %s://HOST:PORT", u.Scheme)
	}
	e := beanstalkEndpoint{addr: u.Host, tls: beanstalk.TLSOptions{On: u.Scheme == "beanstalks"}}
	for name, values := range u.Query() {
		field, ok := tlsParams[name]
		switch {
		case !ok:
			return bad("unknown parameter %s (beanstalks:// takes ca, cert, key and server_name)", name)
		case !e.tls.On:
			return bad("%s= is a TLS setting: use beanstalks://", name)
		case len(values) != 1 || values[0] == "":
			return bad("give %s= one value", name)
		}
		*field(&e.tls) = values[0]
	}
	if err := e.tls.Check(); err != nil {
		return bad("cert= and key=: %v", err)
	}
	return e, nil
}

// dialTimeout bounds a connect and its TLS handshake: a server that accepts and says nothing
// must not hold a run that has not started yet.
const dialTimeout = 10 * time.Second

// dialer reads the endpoint's TLS files and returns its dialer.
func (e beanstalkEndpoint) dialer() (beanstalk.Dialer, error) {
	cfg, err := e.tls.Config()
	if err != nil {
		return beanstalk.Dialer{}, err
	}
	return beanstalk.Dialer{TLS: cfg, Timeout: dialTimeout, UseTLS: "use beanstalks://" + e.addr, DropTLS: "use beanstalk://" + e.addr}, nil
}

// dialBeanstalkURL parses a beanstalk endpoint and connects to it.
func dialBeanstalkURL(ctx context.Context, s string) (*beanstalk.Conn, beanstalkEndpoint, error) {
	e, err := parseBeanstalkURL(s)
	if err != nil {
		return nil, e, err
	}
	d, err := e.dialer()
	if err != nil {
		return nil, e, err
	}
	c, err := d.Dial(ctx, e.addr)
	return c, e, err
}
