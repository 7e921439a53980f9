package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/configs"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/scheduler"
)

// serve listens, opens the backend and serves until SIGTERM/SIGINT or ctx ends, then stops
// gracefully: /readyz turns 503, --shutdown-delay passes, the listener closes. SIGUSR1 turns
// drain mode on for good, as in beanstalkd; SIGHUP reloads the TLS and token files and the
// config file's schedules.
func (p process) serve(ctx context.Context, cfg configs.Config, log *slog.Logger) int {
	signals := p.signals
	if signals == nil {
		// Subscribed before binding, so a signal sent as soon as the port answers is not lost.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		defer signal.Stop(ch)
		signals = ch
	}
	f, err := newFleet(cfg, log)
	if err != nil {
		log.Error("bad configuration", "err", err)
		return exitUsage
	}
	sigs := handleSignals(signals, f, log)
	defer sigs.close()

	// Bind before opening the backend: a taken port is the commonest failure and the cheapest.
	ln, err := listen(cfg)
	if err != nil {
		log.Error("cannot listen", "err", err)
		return exitBind
	}
	opsAddr, err := f.serveOps() // /readyz says "starting" while the store opens
	if err != nil {
		_ = ln.Close()
		log.Error("cannot listen for the ops listener", "err", err)
		return exitBind
	}
	defer f.closeOps()
	if p.opsListening != nil && opsAddr != nil {
		p.opsListening(opsAddr)
	}
	opening := openStore(ctx, cfg, sigs.stops, log)
	if opening.store == nil {
		_ = ln.Close()
		return opening.exit
	}
	store := opening.store
	defer func() {
		if err := store.Close(); err != nil {
			log.Warn("closing backend", "err", err)
		}
	}()
	store = f.instrument(store)
	if err := setPolicies(ctx, store, cfg.Policies, cfg.BackendTimeout); err != nil {
		_ = ln.Close()
		log.Error("cannot set the configured tube policies", "err", err)
		return exitFailure
	}
	if err := setSchedules(ctx, store, cfg.Schedules, cfg.BackendTimeout); err != nil {
		_ = ln.Close()
		log.Error("cannot set the configured schedules", "err", err)
		return exitFailure
	}

	tenants := newTenantStores(log)
	defer tenants.close()
	var access *gateway.Access
	if cfg.Auth.HasPrincipals() {
		stores, err := tenants.open(ctx, cfg)
		if err != nil {
			_ = ln.Close()
			log.Error("cannot open the tenants' stores", "err", err)
			return exitFailure
		}
		if access, err = accessConfig(cfg, stores); err != nil {
			_ = ln.Close()
			log.Error("bad configuration", "err", err)
			return exitUsage
		}
	}
	srv := gateway.NewServer(f.gatewayConfig(gateway.Config{
		Backend:        store,
		MaxJobSize:     uint32(cfg.MaxJobSize), // validated: at most 1 GiB
		Logger:         log,
		BackendTimeout: cfg.BackendTimeout,
		Compat:         cfg.Compat,
		Access:         access,
	}))
	if access != nil {
		f.accessReload.Store(&accessReloader{load: p.reloadConfig, srv: srv, tenants: tenants, log: log})
	}
	probeCtx, stopProbe := context.WithCancel(context.Background())
	defer stopProbe()
	f.opened(probeCtx, srv, store)
	go scheduler.New(store, log, cfg.BackendTimeout).Run(probeCtx)
	sigs.serving(srv, func() { p.reloadSchedules(ctx, store, cfg.BackendTimeout, log) })
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "addr", listenAddr(cfg, ln.Addr()), "backend", redactedURL(cfg.Backend), "version", versionLine(),
		"tls", cfg.TLSEnabled(), "auth", cfg.Auth.TokenFile != "", "principals", len(cfg.Auth.Principals), "tenants", len(cfg.Auth.Tenants))
	if p.listening != nil {
		p.listening(ln.Addr())
	}

	err = waitForStop(ctx, sigs.stops, served, log)
	sigs.stopBegun()
	if err != nil {
		log.Error("serving stopped", "err", err)
		_ = srv.Close()
		return exitFailure
	}
	f.readiness.SetStopping()
	if !delayShutdown(ctx, sigs.stops, cfg.ShutdownDelay, log) {
		_ = srv.Close() // a second SIGTERM/SIGINT during the delay: no graceful stop either
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	stopGracefully(srv, sigs.stops, cfg.ShutdownTimeout, log)
	<-served // Serve returns ErrServerClosed once its listener is closed
	log.Info("stopped")
	return exitOK
}

// reloadConfig reads the configuration again from the command line serve was started with, the
// environment and the config file, for SIGHUP.
func (p process) reloadConfig() (configs.Config, error) {
	fs := newFlagSet()
	if err := fs.Parse(p.args); err != nil {
		return configs.Config{}, err
	}
	cfg, _, err := configs.Load(fs)
	return cfg, err
}

// waitForStop returns nil on SIGTERM, SIGINT or the end of ctx, and Serve's error if serving
// fails first.
func waitForStop(ctx context.Context, stops <-chan os.Signal, served <-chan error, log *slog.Logger) error {
	select {
	case sig := <-stops:
		log.Info("stop requested", "signal", sig.String())
		return nil
	case <-ctx.Done():
		log.Info("stop requested", "reason", context.Cause(ctx).Error())
		return nil
	case err := <-served:
		return err
	}
}

// delayShutdown keeps serving for delay after /readyz turned 503, so that load balancers stop
// sending new connections before the listener closes. It reports false when a second
// SIGTERM/SIGINT asked to stop at once.
func delayShutdown(ctx context.Context, stops <-chan os.Signal, delay time.Duration, log *slog.Logger) bool {
	if delay <= 0 {
		return true
	}
	log.Info("not ready; still serving until the shutdown delay has passed", "delay", delay)
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	case sig := <-stops:
		log.Warn("second signal: stopping now", "signal", sig.String())
		return false
	}
	return true
}

// stopGracefully lets running commands finish and returns reservations, for at most timeout;
// a second SIGTERM/SIGINT cuts the connections at once.
func stopGracefully(srv *gateway.Server, stops <-chan os.Signal, timeout time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	var err error
	select {
	case err = <-done:
	case sig := <-stops:
		log.Warn("second signal: closing connections now", "signal", sig.String())
		cancel()
		err = <-done
	}
	if err != nil {
		log.Warn("graceful stop cut short; connections closed", "err", err)
	}
}

// setPolicies sets the config's policies in the store, each replacing the store's policy for
// the same pattern; the store's other policies stay (set at run time, kept by the store).
func setPolicies(ctx context.Context, store backend.Backend, ps []configs.Policy, timeout time.Duration) error {
	for _, p := range ps {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		err := store.SetPolicy(callCtx, p.Backend())
		cancel()
		if err != nil {
			return fmt.Errorf("tube %q: %w", p.Tube, err)
		}
	}
	return nil
}

// setSchedules sets the config's schedules in the store, each replacing the store's schedule of
// the same name (keeping its last run if its timing is the same); the store's other schedules
// stay (set at run time, or by another gateway's config).
func setSchedules(ctx context.Context, store backend.Backend, ss []configs.Schedule, timeout time.Duration) error {
	for _, s := range ss {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		err := store.SetSchedule(callCtx, s.Backend())
		cancel()
		if err != nil {
			return fmt.Errorf("schedule %q: %w", s.Name, err)
		}
	}
	return nil
}

// reloadSchedules reads the configuration again, as at start, and sets its schedules (SIGHUP).
// A configuration that does not load — a bad cron expression say — changes nothing: the
// schedules set before stay, and why is logged.
func (p process) reloadSchedules(ctx context.Context, store backend.Backend, timeout time.Duration, log *slog.Logger) {
	fs := newFlagSet()
	err := fs.Parse(p.args)
	var cfg configs.Config
	if err == nil {
		cfg, _, err = configs.Load(fs)
	}
	if err != nil {
		log.Error("SIGHUP: configuration not reloaded; the schedules stay as they were", "err", err)
		return
	}
	if err := setSchedules(ctx, store, cfg.Schedules, timeout); err != nil {
		log.Error("SIGHUP: schedules not set", "err", err)
		return
	}
	log.Info("SIGHUP: schedules reloaded", "schedules", len(cfg.Schedules))
}
