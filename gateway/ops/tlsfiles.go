package ops

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// TLSFiles is the beanstalk listener's TLS configuration, read from PEM files and re-read by
// Reload: new handshakes use the new certificate (and client CAs), connections already open
// keep theirs.
type TLSFiles struct {
	cert, key, clientCA string
	current             atomic.Pointer[tls.Config]
}

// LoadTLS reads the certificate, its key and, if clientCA is set, the CAs client certificates
// must chain to (mutual TLS).
func LoadTLS(cert, key, clientCA string) (*TLSFiles, error) {
	f := &TLSFiles{cert: cert, key: key, clientCA: clientCA}
	return f, f.Reload()
}

// Reload re-reads the files; on an error the configuration in use stays.
func (f *TLSFiles) Reload() error {
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if f.clientCA != "" {
		pem, err := os.ReadFile(f.clientCA)
		if err != nil {
			return fmt.Errorf("tls client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return errors.New("tls client CA " + f.clientCA + ": no PEM certificate in it")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	f.current.Store(cfg)
	return nil
}

// Config is the tls.Config to serve with: each handshake takes the configuration last loaded.
func (f *TLSFiles) Config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return f.current.Load(), nil
		},
	}
}
