package beanstalk

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSOptions are a tool's client TLS settings, as its flags or URL name them.
type TLSOptions struct {
	On         bool   // TLS with the system's roots; any other field turns it on as well
	CA         string // PEM file of the CAs the server's certificate must chain to, instead of the system's
	Cert, Key  string // PEM files of a client certificate and its key, for mutual TLS
	ServerName string // the name the server's certificate must carry, instead of the address's host
}

// ErrCertWithoutKey is a client certificate given without its key, or the reverse.
var ErrCertWithoutKey = errors.New("a client certificate and its key go together: give both or neither")

// Enabled reports whether the options ask for TLS.
func (o TLSOptions) Enabled() bool {
	return o.On || o.CA != "" || o.Cert != "" || o.Key != "" || o.ServerName != ""
}

// Check refuses options that cannot make a configuration whatever the files hold.
func (o TLSOptions) Check() error {
	if (o.Cert == "") != (o.Key == "") {
		return ErrCertWithoutKey
	}
	return nil
}

// Config reads the files and returns the client configuration, or nil when TLS is off.
func (o TLSOptions) Config() (*tls.Config, error) {
	if !o.Enabled() {
		return nil, nil
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.CA != "" {
		pem, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, fmt.Errorf("TLS CA: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA %s: no PEM certificate in it", o.CA)
		}
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
