package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/configs"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/console"
	"github.com/beangate/beangate/gateway/ops"
)

// fleet is what the fleet settings add to serving: the ops HTTP listener with its metrics and
// readiness, TLS and token auth on the beanstalk listener.
type fleet struct {
	cfg       configs.Config
	log       *slog.Logger
	readiness *ops.Readiness
	registry  *prometheus.Registry // nil without --http and --metrics-http: nothing is measured
	http      *http.Server         // --http
	// metricsHTTP serves --metrics-http: /metrics, /healthz and /readyz, never the console.
	metricsHTTP *http.Server
	tls         *ops.TLSFiles
	tokens      *ops.Tokens
	console     *console.Console // nil without --http or with --console=false
	// sessions names the gateway's connections; made here so that the console knows the
	// gateway's id before the gateway exists.
	sessions *backend.SessionIDs
	// accessReload re-reads principals, grants and quotas on SIGHUP; nil without principals.
	accessReload atomic.Pointer[accessReloader]
	// srv is the gateway once it serves: the console asks it for its callers' principals.
	srv atomic.Pointer[gateway.Server]
}

// newFleet reads the TLS and token files; errors are the configuration's (exit 5).
func newFleet(cfg configs.Config, log *slog.Logger) (*fleet, error) {
	f := &fleet{cfg: cfg, log: log, readiness: ops.NewReadiness(cfg.StoreDownAfter, log), sessions: backend.NewSessionIDs()}
	var err error
	if cfg.TLSEnabled() {
		if f.tls, err = ops.LoadTLS(cfg.TLS.Cert, cfg.TLS.Key, cfg.TLS.ClientCA); err != nil {
			return nil, err
		}
	}
	if cfg.Auth.TokenFile != "" {
		if f.tokens, err = ops.LoadTokens(cfg.Auth.TokenFile); err != nil {
			return nil, err
		}
	}
	if cfg.Auth.HasPrincipals() {
		if _, err := accessConfig(cfg, nil); err != nil { // token files read, shared tokens found
			return nil, err
		}
	}
	return f, nil
}

// serveOps binds the ops listener and the metrics listener, those configured, and serves them
// until closeOps; /readyz answers 503 until the store is open. It returns the ops listener's
// address (nil without --http).
func (f *fleet) serveOps() (net.Addr, error) {
	if f.cfg.HTTP == "" && f.cfg.Metrics.HTTP == "" {
		return nil, nil
	}
	f.registry = prometheus.NewRegistry()
	f.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		ops.NewBuildInfo(buildVersion(), buildRevision(), backendKind(f.cfg.Backend)),
		ops.NewReadyCollector(f.readiness.Ready)) // from the start: 0 while the store is not open yet
	var addr net.Addr
	if f.cfg.HTTP != "" {
		ln, err := net.Listen("tcp", f.cfg.HTTP)
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.Handle("/", ops.Handler(f.registry, f.readiness))
		if f.cfg.Console.Enabled {
			f.console = console.New(f.consoleOptions())
			f.console.Register(mux)
		}
		f.http = f.serveHTTP(ln, mux, "ops listener")
		addr = ln.Addr()
		f.log.Info("ops listener", "addr", addr.String())
		f.warnIfExposed(addr)
	}
	if f.cfg.Metrics.HTTP != "" {
		ln, err := net.Listen("tcp", f.cfg.Metrics.HTTP)
		if err != nil {
			f.closeOps()
			return nil, fmt.Errorf("--metrics-http: %w", err)
		}
		f.metricsHTTP = f.serveHTTP(ln, ops.Handler(f.registry, f.readiness), "metrics listener")
		f.log.Info("metrics listener", "addr", ln.Addr().String())
	}
	return addr, nil
}

func (f *fleet) serveHTTP(ln net.Listener, h http.Handler, name string) *http.Server {
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(f.log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.log.Error(name+" failed", "err", err)
		}
	}()
	return s
}

// warnIfExposed warns when other hosts can reach a console without authentication: its actions
// are off then, but every tube, job and body can be read.
func (f *fleet) warnIfExposed(addr net.Addr) {
	if f.console == nil || ops.Loopback(addr) || f.consoleOptions().Auth.Required() {
		return
	}
	f.log.Warn("the ops listener is reachable from other hosts and the console has no authentication: "+
		"anyone who reaches it can read every tube, job and body (console actions stay off); "+
		"set --console-password-hash or --auth-token-file, or --console=false, "+
		"or keep --http on loopback and serve metrics alone with --metrics-http", "addr", addr.String())
}

// consoleOptions: Basic Auth with the bcrypt hash, and the beanstalk listener's tokens, if set.
func (f *fleet) consoleOptions() console.Options {
	c := f.cfg.Console
	opts := console.Options{
		ReadOnly:    c.ReadOnly,
		Auth:        console.Auth{User: c.User, PasswordHash: c.PasswordHash},
		Backend:     backendKind(f.cfg.Backend),
		Namespace:   storeNamespace(f.cfg),
		Store:       storeAddress(f.cfg.Backend),
		Gateway:     f.sessions.Process(),
		Version:     buildVersion(),
		MaxJobSize:  int(f.cfg.MaxJobSize),
		CallTimeout: f.cfg.BackendTimeout,
		Log:         f.log,
	}
	if f.tokens != nil {
		opts.Auth.Token = f.tokens.Check
	}
	if f.cfg.Auth.HasPrincipals() {
		// An API token is a principal's: the console needs one (or its own user) for anything.
		opts.Callers = f.callerByToken
		opts.Auth.Token = func(token []byte) bool {
			_, ok := f.callerByToken(token)
			return ok
		}
	}
	return opts
}

// callerByToken is the gateway's principal for token, once the gateway serves.
func (f *fleet) callerByToken(token []byte) (*gateway.Caller, bool) {
	srv := f.srv.Load()
	if srv == nil {
		return nil, false
	}
	return srv.CallerByToken(token)
}

// backendKind names the store for the console: the URL's scheme, never its credentials.
func backendKind(url string) string {
	if i := strings.Index(url, "://"); i > 0 {
		return url[:i]
	}
	return url
}

// instrument wraps the store so its calls are measured, and exports its binlog's figures if it
// keeps one and its policies' actions, when metrics are on; the actions are logged at debug
// level either way.
func (f *fleet) instrument(store backend.Backend) backend.Backend {
	if f.registry == nil {
		ops.ObservePolicyActions(nil, store, 0, f.log) // the debug log only
		return store
	}
	ops.RegisterBinlog(f.registry, store)
	ops.ObservePolicyActions(f.registry, store, f.cfg.Metrics.MaxTubes, f.log)
	return ops.InstrumentBackend(store, f.registry)
}

// gatewayConfig fills in what the fleet settings give the gateway.
func (f *fleet) gatewayConfig(gc gateway.Config) gateway.Config {
	if f.registry != nil {
		gc.Observer = ops.NewMetrics(f.registry, f.cfg.Metrics.MaxTubes)
	}
	if f.tls != nil {
		gc.TLS = f.tls.Config()
	}
	if f.tokens != nil {
		gc.Auth = f.tokens.Check
	}
	gc.Sessions = f.sessions
	gc.MaxConnections = f.cfg.MaxConnections
	gc.MaxHandshaking = f.cfg.MaxHandshaking
	gc.HandshakeTimeout = f.cfg.HandshakeTimeout
	return gc
}

// opened starts the figures, store metrics and store probe once the store is open and srv
// serves it, and turns ready. The probe runs until ctx ends.
func (f *fleet) opened(ctx context.Context, srv *gateway.Server, store backend.Backend) {
	f.srv.Store(srv)
	if f.console != nil {
		f.console.Open(store, srv.TubeWaiting)
		go f.console.Run(ctx)
	}
	if f.registry != nil {
		f.registry.MustRegister(
			ops.NewFiguresCollector(srv.Figures, nil), // beangate_ready is registered already
			ops.NewStoreCollector(store, f.cfg.Metrics.MaxTubes, f.cfg.BackendTimeout),
		)
		if f.cfg.Auth.HasPrincipals() {
			f.registry.MustRegister(ops.NewTenantCollector(srv.Tenants, f.cfg.BackendTimeout))
		}
	}
	go f.readiness.WatchStore(ctx, store, min(time.Second, f.cfg.StoreDownAfter/2))
	f.readiness.SetOpen()
}

// reload re-reads the TLS files and the token file (SIGHUP); what fails to load is kept as it
// was and logged.
func (f *fleet) reload() {
	if f.tls != nil {
		if err := f.tls.Reload(); err != nil {
			f.log.Error("SIGHUP: TLS files not reloaded; the previous certificate stays", "err", err)
		} else {
			f.log.Info("SIGHUP: TLS certificate reloaded")
		}
	}
	if f.tokens != nil {
		if err := f.tokens.Reload(); err != nil {
			f.log.Error("SIGHUP: auth tokens not reloaded; the previous ones stay", "err", err)
		} else {
			f.log.Info("SIGHUP: auth tokens reloaded")
		}
	}
	if r := f.accessReload.Load(); r != nil {
		r.reload(context.Background())
	}
}

// closeOps stops the ops and metrics listeners, last, so that /healthz answers until the end.
func (f *fleet) closeOps() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range []*http.Server{f.http, f.metricsHTTP} {
		if s != nil {
			_ = s.Shutdown(ctx)
		}
	}
}
