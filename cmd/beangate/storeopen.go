package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/configs"
)

// The backoff between attempts to reach the store at start: doubling from the first to the
// last, each ±20% so that a fleet started together does not knock in step.
const (
	firstStoreRetry = 250 * time.Millisecond
	lastStoreRetry  = 5 * time.Second
)

// storeOpening is how opening the store ended: the store, or the exit status when the process
// must stop (a clean 0 when a signal stopped it).
type storeOpening struct {
	store backend.Backend
	exit  int
}

// openStore opens the store, trying a shared one again while it cannot be reached (not up
// yet, as under Compose or Kubernetes), for at most --store-open-timeout (0: for ever).
// Meanwhile /readyz answers 503 "starting", and a SIGTERM/SIGINT on stops stops cleanly. A
// failure that trying again cannot fix (a bad URL, a wrong password, a certificate not trusted)
// ends it at once.
func openStore(ctx context.Context, cfg configs.Config, stops <-chan os.Signal, log *slog.Logger) storeOpening {
	failed := func(err error) storeOpening {
		log.Error("cannot open backend", "backend", redactedURL(cfg.Backend), "err", redactedError(err, cfg.Backend))
		return storeOpening{exit: exitStatus(err)}
	}
	open, shared, err := storeOpener(cfg, log)
	if err != nil {
		return failed(err)
	}
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	limit := cfg.StoreOpenTimeout
	if !shared {
		limit = 0 // tried once: a local store that fails to open will not open later
	}
	type result struct {
		store backend.Backend
		err   error
	}
	done := make(chan result, 1)
	go func() {
		s, err := retryOpen(octx, open, shared, limit, cfg.Backend, log)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		switch {
		case r.err == nil:
			return storeOpening{store: r.store}
		case ctx.Err() != nil:
			log.Info("stop requested while opening the store", "reason", context.Cause(ctx).Error())
			return storeOpening{exit: exitOK}
		}
		return failed(r.err)
	case sig := <-stops:
		log.Info("stop requested while opening the store", "signal", sig.String())
		cancel()
		if r := <-done; r.store != nil { // opened just as the signal came
			_ = r.store.Close()
		}
		log.Info("stopped")
		return storeOpening{exit: exitOK}
	}
}

// retryOpen calls open until it succeeds, fails in a way trying again cannot fix, ctx ends, or
// limit (when positive) has passed since the first attempt. A store that is not shared is
// tried once. Each failure is logged, without the URL's password.
func retryOpen(ctx context.Context, open func(context.Context) (backend.Backend, error), shared bool, limit time.Duration, rawURL string, log *slog.Logger) (backend.Backend, error) {
	began := time.Now()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	wait := firstStoreRetry
	for attempt := 1; ; attempt++ {
		store, err := open(ctx)
		if err == nil {
			if attempt > 1 {
				log.Info("store reached", "attempts", attempt, "after", time.Since(began).Round(time.Millisecond))
			}
			return store, nil
		}
		if !shared || ctx.Err() != nil || !retryable(err) {
			if limit > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("store not reached within --store-open-timeout %s: %w", limit, err)
			}
			return nil, err
		}
		delay := time.Duration(float64(wait) * (0.8 + 0.4*rand.Float64()))
		log.Warn("store not reachable yet; trying again", "attempt", attempt, "in", delay.Round(time.Millisecond),
			"err", redactedError(err, rawURL))
		select {
		case <-ctx.Done():
			if limit > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("store not reached within --store-open-timeout %s: %w", limit, err)
			}
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		wait = min(2*wait, lastStoreRetry)
	}
}

// retryable tells the failures to open a shared store that time may cure: the server not
// reachable yet (refused, reset, no route, its name not in DNS yet, a timeout), starting up or
// loading its data, or out of connections. Anything else — a wrong password, missing
// permissions, a certificate not trusted, a schema that is not migrated — ends the start at
// once, as a crash loop would only repeat it.
func retryable(err error) bool {
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) || goredis.IsAuthError(err) || goredis.IsPermissionError(err) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P03", // cannot_connect_now: starting up, shutting down, in recovery
			"57P01", "57P02", // admin_shutdown, crash_shutdown
			"53300": // too_many_connections
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection_exception
	}
	var redisErr goredis.Error
	if errors.As(err, &redisErr) {
		for _, prefix := range []string{"LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY"} {
			if strings.HasPrefix(redisErr.Error(), prefix) {
				return true
			}
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}

// redactedError is err's text with the URL's password, if any, replaced: drivers do not put
// it in their errors, but a log line must not depend on that.
func redactedError(err error, rawURL string) string {
	msg := err.Error()
	if u, perr := url.Parse(rawURL); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}
