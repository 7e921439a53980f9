package ctl

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/beangate/beangate/internal/beanstalk"
)

// ctlTLS is ctl's TLS: the options of its flags and environment, and the configuration read
// from them before a command runs. It serves both of ctl's connections: the beanstalk one and,
// for an https:// --api, the API's.
type ctlTLS struct {
	opts   beanstalk.TLSOptions
	envErr error // BEANGATE_CTL_TLS that is not a boolean
	config *tls.Config
}

func (t *ctlTLS) flags(pf *pflag.FlagSet) {
	on, err := envBool("BEANGATE_CTL_TLS")
	t.envErr = err
	pf.BoolVar(&t.opts.On, "tls", on, "speak TLS to the beanstalk server, checked against the system's roots (env BEANGATE_CTL_TLS)")
	pf.StringVar(&t.opts.CA, "tls-ca", os.Getenv("BEANGATE_CTL_TLS_CA"), "check the server's certificate against the PEM CAs in `FILE`, not the system's roots; implies --tls (env BEANGATE_CTL_TLS_CA)")
	pf.StringVar(&t.opts.Cert, "tls-cert", os.Getenv("BEANGATE_CTL_TLS_CERT"), "present the PEM client certificate in `FILE` (mutual TLS; with --tls-key); implies --tls (env BEANGATE_CTL_TLS_CERT)")
	pf.StringVar(&t.opts.Key, "tls-key", os.Getenv("BEANGATE_CTL_TLS_KEY"), "PEM private key `FILE` of --tls-cert (env BEANGATE_CTL_TLS_KEY)")
	pf.StringVar(&t.opts.ServerName, "tls-server-name", os.Getenv("BEANGATE_CTL_TLS_SERVER_NAME"), "the `NAME` the server's certificate must carry, when it is not --addr's host; implies --tls (env BEANGATE_CTL_TLS_SERVER_NAME)")
}

// load checks the options and reads their files: a certificate without its key (or a bad
// BEANGATE_CTL_TLS) is a usage error, a file that does not load a failure.
func (t *ctlTLS) load() error {
	if t.envErr != nil {
		return usageError{t.envErr}
	}
	if err := t.opts.Check(); err != nil {
		return usageError{fmt.Errorf("--tls-cert and --tls-key: %w", err)}
	}
	cfg, err := t.opts.Config()
	t.config = cfg
	return err
}

// dialer dials addr as the options say; a server that speaks the other way is told what to
// change.
func (t *ctlTLS) dialer() beanstalk.Dialer {
	return beanstalk.Dialer{TLS: t.config, Timeout: 5 * time.Second, UseTLS: "use --tls", DropTLS: "drop --tls and the --tls-* options"}
}

// httpTransport is the API's transport: the default one, with the TLS configuration of the
// options when they ask for TLS (used for an https:// --api only).
func (t *ctlTLS) httpTransport() http.RoundTripper {
	if t.config == nil {
		return http.DefaultTransport
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = t.config
	return tr
}

// plainToHTTPS tells a plain HTTP request that an HTTPS server answered: its 400 says so in
// the body (Go's "Client sent an HTTP request to an HTTPS server", nginx's "The plain HTTP
// request was sent to HTTPS port"). Any other response is left as it was.
func plainToHTTPS(res *http.Response, base string) error {
	if res.StatusCode != http.StatusBadRequest || res.TLS != nil {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	if !bytes.Contains(head, []byte("HTTPS")) {
		return nil
	}
	return fmt.Errorf("the server at %s speaks HTTPS; use https:// in --api", base)
}

// envBool reads a boolean environment variable; unset or empty is false.
func envBool(key string) (bool, error) {
	v := os.Getenv(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", key, v)
	}
	return b, nil
}
