package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/configs"
	"github.com/beangate/beangate/gateway"
)

// serve listens, opens the backend and serves until SIGTERM/SIGINT or ctx ends, then stops
// gracefully. SIGUSR1 turns drain mode on for good, as in beanstalkd.
func (p process) serve(ctx context.Context, cfg configs.Config, log *slog.Logger) int {
	signals := p.signals
	if signals == nil {
		// Subscribed before binding, so a signal sent as soon as the port answers is not lost.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT)
		defer signal.Stop(ch)
		signals = ch
	}

	// Bind before opening the backend: a taken port is the commonest failure and the cheapest.
	ln, err := listen(cfg)
	if err != nil {
		log.Error("cannot listen", "err", err)
		return exitBind
	}
	store, err := openBackend(ctx, cfg, log)
	if err != nil {
		_ = ln.Close()
		log.Error("cannot open backend", "backend", redactedURL(cfg.Backend), "err", err)
		if errors.Is(err, binlog.ErrLocked) {
			return exitLocked
		}
		return exitFailure
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Warn("closing backend", "err", err)
		}
	}()

	srv := gateway.NewServer(gateway.Config{
		Backend:        store,
		MaxJobSize:     uint32(cfg.MaxJobSize), // validated: at most 1 GiB
		Logger:         log,
		BackendTimeout: cfg.BackendTimeout,
	})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "backend", redactedURL(cfg.Backend), "version", versionLine())
	if p.listening != nil {
		p.listening(ln.Addr())
	}

	if err := waitForStop(ctx, srv, signals, served, log); err != nil {
		log.Error("serving stopped", "err", err)
		_ = srv.Close()
		return exitFailure
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	stopGracefully(srv, signals, cfg.ShutdownTimeout, log)
	<-served // Serve returns ErrServerClosed once its listener is closed
	log.Info("stopped")
	return exitOK
}

// waitForStop returns nil on SIGTERM, SIGINT or the end of ctx, and Serve's error if serving
// fails first. SIGUSR1 meanwhile turns drain mode on.
func waitForStop(ctx context.Context, srv *gateway.Server, signals <-chan os.Signal, served <-chan error, log *slog.Logger) error {
	for {
		select {
		case sig := <-signals:
			if sig != syscall.SIGUSR1 {
				log.Info("stop requested", "signal", sig.String())
				return nil
			}
			srv.SetDraining(true)
			log.Info("draining: put now answers DRAINING until restart")
		case <-ctx.Done():
			log.Info("stop requested", "reason", context.Cause(ctx).Error())
			return nil
		case err := <-served:
			return err
		}
	}
}

// stopGracefully lets running commands finish and returns reservations, for at most timeout;
// a second SIGTERM/SIGINT cuts the connections at once.
func stopGracefully(srv *gateway.Server, signals <-chan os.Signal, timeout time.Duration, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				log.Warn("graceful stop cut short; connections closed", "err", err)
			}
			return
		case sig := <-signals:
			if sig != syscall.SIGUSR1 {
				log.Warn("second signal: closing connections now", "signal", sig.String())
				cancel()
			}
		}
	}
}
