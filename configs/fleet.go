package configs

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/beangate/beangate/gateway"
)

// Fleet holds what running many gateways behind a load balancer needs: the ops HTTP listener,
// TLS and token auth on the beanstalk listener, connection limits and the rolling-restart
// delay. Squashed into Config, so its keys sit at the top level of the file.
type Fleet struct {
	// HTTP is the ops listener's address (/healthz, /readyz, /metrics, and the console unless
	// Console.Enabled is false); empty: off.
	HTTP string `mapstructure:"http"`
	// ShutdownDelay: on SIGTERM/SIGINT, /readyz answers 503 for this long before the listener
	// closes, so load balancers stop sending new connections first.
	ShutdownDelay time.Duration `mapstructure:"shutdown_delay"`
	// StoreDownAfter: /readyz answers 503 once the store has been unreachable this long.
	StoreDownAfter time.Duration `mapstructure:"store_down_after"`
	// StoreOpenTimeout: at start, a store that cannot be reached is tried again (with backoff)
	// for this long before the process gives up; 0: for ever. Under Compose or Kubernetes the
	// store may come up after the gateway, which then waits not ready instead of crash-looping.
	StoreOpenTimeout time.Duration `mapstructure:"store_open_timeout"`
	// MaxConnections bounds open beanstalk connections; 0: no bound.
	MaxConnections int `mapstructure:"max_connections"`
	// MaxHandshaking bounds connections still in the TLS handshake or not yet authenticated.
	MaxHandshaking int `mapstructure:"max_handshaking"`
	// HandshakeTimeout bounds the TLS handshake plus auth from the moment of accept.
	HandshakeTimeout time.Duration `mapstructure:"handshake_timeout"`
	TLS              TLS           `mapstructure:"tls"`
	Auth             Auth          `mapstructure:"auth"`
	Metrics          Metrics       `mapstructure:"metrics"`
	Console          Console       `mapstructure:"console"`
}

// TLS serves the beanstalk listener over TLS when Cert and Key are set.
type TLS struct {
	Cert     string `mapstructure:"cert"`      // PEM certificate chain file
	Key      string `mapstructure:"key"`       // PEM private key file
	ClientCA string `mapstructure:"client_ca"` // PEM CA bundle: clients must present a certificate it signed
}

// Auth turns on token auth: `auth <token>` first on every connection; and, with principals,
// anonymous access or tenants, grants per tube (access.go, docs/security.md).
type Auth struct {
	TokenFile  string      `mapstructure:"token_file"` // one accepted token per line
	Principals []Principal `mapstructure:"principals"`
	Anonymous  *Anonymous  `mapstructure:"anonymous"`
	Tenants    []Tenant    `mapstructure:"tenants"`
}

// Metrics tunes /metrics.
type Metrics struct {
	// HTTP is a listener of its own for /metrics, /healthz and /readyz only: what Prometheus
	// and a load balancer need can be reached from the network while the console stays on a
	// loopback --http. Empty: none.
	HTTP string `mapstructure:"http"`
	// MaxTubes caps the tubes with per-tube series, so a tube explosion cannot blow up
	// Prometheus.
	MaxTubes int `mapstructure:"max_tubes"`
}

// Console is the web console and its JSON API on the ops listener (/ui/, /api/).
type Console struct {
	// Enabled serves the console whenever the ops listener is on.
	Enabled bool `mapstructure:"enabled"`
	// ReadOnly refuses every action (kick, delete, flush, pause, move, put) and hides them.
	ReadOnly bool `mapstructure:"read_only"`
	// User and PasswordHash (bcrypt) turn on Basic Auth; with an auth token file, its tokens are
	// accepted too. With either, nothing of the console is served without auth.
	User         string `mapstructure:"user"`
	PasswordHash string `mapstructure:"password_hash"`
}

func defaultFleet() Fleet {
	return Fleet{
		StoreDownAfter:   5 * time.Second,
		MaxHandshaking:   1024,
		HandshakeTimeout: gateway.DefaultHandshakeTimeout,
		Metrics:          Metrics{MaxTubes: 1000},
		Console:          Console{Enabled: true, User: "admin"},
	}
}

// fleetFlagKeys maps the fleet flags to their keys, as flagKeys does.
var fleetFlagKeys = map[string]string{
	"http":                  "http",
	"shutdown-delay":        "shutdown_delay",
	"store-down-after":      "store_down_after",
	"store-open-timeout":    "store_open_timeout",
	"max-connections":       "max_connections",
	"max-handshaking":       "max_handshaking",
	"handshake-timeout":     "handshake_timeout",
	"tls-cert":              "tls.cert",
	"tls-key":               "tls.key",
	"tls-client-ca":         "tls.client_ca",
	"auth-token-file":       "auth.token_file",
	"metrics-http":          "metrics.http",
	"metrics-max-tubes":     "metrics.max_tubes",
	"console":               "console.enabled",
	"console-read-only":     "console.read_only",
	"console-user":          "console.user",
	"console-password-hash": "console.password_hash",
}

func fleetDefaults() map[string]any {
	d := defaultFleet()
	return map[string]any{
		"http":                  d.HTTP,
		"shutdown_delay":        d.ShutdownDelay,
		"store_down_after":      d.StoreDownAfter,
		"store_open_timeout":    d.StoreOpenTimeout,
		"max_connections":       d.MaxConnections,
		"max_handshaking":       d.MaxHandshaking,
		"handshake_timeout":     d.HandshakeTimeout,
		"tls.cert":              d.TLS.Cert,
		"tls.key":               d.TLS.Key,
		"tls.client_ca":         d.TLS.ClientCA,
		"auth.token_file":       d.Auth.TokenFile,
		"metrics.http":          d.Metrics.HTTP,
		"metrics.max_tubes":     d.Metrics.MaxTubes,
		"console.enabled":       d.Console.Enabled,
		"console.read_only":     d.Console.ReadOnly,
		"console.user":          d.Console.User,
		"console.password_hash": d.Console.PasswordHash,
	}
}

func addFleetFlags(fs *pflag.FlagSet) {
	d := defaultFleet()
	fs.String("http", d.HTTP, "serve /healthz, /readyz, /metrics and the console on `ADDR` (host:port; loopback advised); off when empty")
	fs.Duration("shutdown-delay", d.ShutdownDelay, "on SIGTERM/SIGINT, answer /readyz 503 for this `DURATION` before closing the listener")
	fs.Duration("store-down-after", d.StoreDownAfter, "/readyz answers 503 once the store has been unreachable this `DURATION`")
	fs.Duration("store-open-timeout", d.StoreOpenTimeout, "at start, keep trying to reach the store for this `DURATION` before exiting (0: for ever)")
	fs.Int("max-connections", d.MaxConnections, "refuse beanstalk connections beyond `N` open ones (0: no limit)")
	fs.Int("max-handshaking", d.MaxHandshaking, "refuse connections beyond `N` still in the TLS handshake or unauthenticated")
	fs.Duration("handshake-timeout", d.HandshakeTimeout, "close a connection whose TLS handshake and auth take longer than `DURATION`")
	fs.String("tls-cert", d.TLS.Cert, "serve the beanstalk listener over TLS with this PEM certificate `FILE` (reloaded on SIGHUP)")
	fs.String("tls-key", d.TLS.Key, "PEM private key `FILE` for --tls-cert")
	fs.String("tls-client-ca", d.TLS.ClientCA, "require client certificates signed by the PEM CAs in `FILE` (mutual TLS)")
	fs.String("auth-token-file", d.Auth.TokenFile, "connections must send \"auth <token>\" first; accepted tokens one per line in `FILE` (re-read on SIGHUP)")
	fs.String("metrics-http", d.Metrics.HTTP, "serve only /metrics, /healthz and /readyz on `ADDR` (host:port), apart from --http and its console; off when empty")
	fs.Int("metrics-max-tubes", d.Metrics.MaxTubes, "per-tube metrics for at most `N` tubes")
	fs.Bool("console", d.Console.Enabled, "serve the web console (/ui/) and its JSON API (/api/) on the ops listener")
	fs.Bool("console-read-only", d.Console.ReadOnly, "console and API: refuse and hide every action")
	fs.String("console-user", d.Console.User, "console Basic Auth `USER` (with --console-password-hash)")
	fs.String("console-password-hash", d.Console.PasswordHash, "console Basic Auth: the bcrypt `HASH` of the password (htpasswd -nbB, or beangate ctl hash-password)")
}

func (f *Fleet) validate(bad func(format string, args ...any)) {
	if f.ShutdownDelay < 0 {
		bad("shutdown_delay %s: must not be negative", f.ShutdownDelay)
	}
	if f.StoreDownAfter <= 0 {
		bad("store_down_after %s: must be positive", f.StoreDownAfter)
	}
	if f.StoreOpenTimeout < 0 {
		bad("store_open_timeout %s: must not be negative (0: for ever)", f.StoreOpenTimeout)
	}
	if f.MaxConnections < 0 {
		bad("max_connections %d: must not be negative", f.MaxConnections)
	}
	if f.MaxHandshaking < 1 {
		bad("max_handshaking %d: must be at least 1", f.MaxHandshaking)
	}
	if f.HandshakeTimeout <= 0 {
		bad("handshake_timeout %s: must be positive", f.HandshakeTimeout)
	}
	if (f.TLS.Cert == "") != (f.TLS.Key == "") {
		bad("tls.cert and tls.key: give both or neither")
	}
	if f.TLS.ClientCA != "" && f.TLS.Cert == "" {
		bad("tls.client_ca: needs tls.cert and tls.key")
	}
	if h := f.Console.PasswordHash; h != "" && !isBcrypt(h) {
		bad("console.password_hash: not a bcrypt hash ($2a$, $2b$ or $2y$)")
	}
	if f.Metrics.MaxTubes < 0 {
		bad("metrics.max_tubes %d: must not be negative", f.Metrics.MaxTubes)
	}
	f.validateAccess(bad)
}

// TLSEnabled reports whether the beanstalk listener serves TLS.
func (f *Fleet) TLSEnabled() bool { return f.TLS.Cert != "" }

// isBcrypt tells a bcrypt hash by its prefix; the console checks the rest at the first login.
func isBcrypt(h string) bool {
	return len(h) == 60 && (strings.HasPrefix(h, "$2a$") || strings.HasPrefix(h, "$2b$") || strings.HasPrefix(h, "$2y$"))
}
