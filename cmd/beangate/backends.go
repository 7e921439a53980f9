package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	beanpg "github.com/beangate/beangate/backend/postgres"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/configs"
)

// openBackend opens the job store named by cfg.Backend, once.
func openBackend(ctx context.Context, cfg configs.Config, log *slog.Logger) (backend.Backend, error) {
	open, _, err := storeOpener(cfg, log)
	if err != nil {
		return nil, err
	}
	return open(ctx)
}

// storeOpener reads cfg.Backend and returns how to open the store, and whether it is a shared
// store (Redis, PostgreSQL), which may not be up yet and is worth trying again. A URL that
// cannot work fails here, before any attempt. Each backend adds its scheme here, and only here.
func storeOpener(cfg configs.Config, log *slog.Logger) (open func(context.Context) (backend.Backend, error), shared bool, err error) {
	u, err := url.Parse(cfg.Backend)
	if err != nil {
		return nil, false, errors.New("backend: not a valid URL") // the URL may hold a password
	}
	switch strings.ToLower(u.Scheme) {
	case "memory":
		if err := memoryURL(u); err != nil {
			return nil, false, backend.BadOptions(err)
		}
		return func(context.Context) (backend.Backend, error) {
			return memory.Open(memory.Options{Binlog: binlogOptions(cfg, log)})
		}, false, nil
	case "redis", "rediss":
		opts, err := beanredis.ParseURL(cfg.Backend)
		if err != nil {
			return nil, false, err
		}
		opts.Logger = log
		return func(ctx context.Context) (backend.Backend, error) { return beanredis.New(ctx, opts) }, true, nil
	case "postgres", "postgresql":
		opts, err := beanpg.ParseURL(cfg.Backend)
		if err != nil {
			return nil, false, err
		}
		opts.Logger = log
		opts.MaxJobSize = int(cfg.MaxJobSize) // the SQL put's body limit (validated: at most 1 GiB)
		return func(ctx context.Context) (backend.Backend, error) { return beanpg.New(ctx, opts) }, true, nil
	default:
		return nil, false, fmt.Errorf("backend: scheme %q is not supported by this build", u.Scheme)
	}
}

// tenantConfig is cfg with its store moved to a tenant's namespace: the Redis key prefix or the
// PostgreSQL schema named namespace, or for the memory store an engine of its own whose binlog,
// if any, is the directory namespace under binlog.dir. The one place a tenant's store is told
// apart from the main one; open it with storeOpener.
func tenantConfig(cfg configs.Config, namespace string) (configs.Config, error) {
	u, err := url.Parse(cfg.Backend)
	if err != nil {
		return cfg, errors.New("backend: not a valid URL")
	}
	q := u.Query()
	switch strings.ToLower(u.Scheme) {
	case "memory":
		if cfg.Binlog.Dir != "" {
			cfg.Binlog.Dir = filepath.Join(cfg.Binlog.Dir, namespace)
			if err := os.MkdirAll(cfg.Binlog.Dir, 0o700); err != nil {
				return cfg, fmt.Errorf("tenant binlog directory: %w", err)
			}
		}
		return cfg, nil
	case "redis", "rediss":
		q.Set("prefix", namespace)
	case "postgres", "postgresql":
		q.Set("schema", namespace)
	default:
		return cfg, fmt.Errorf("backend: scheme %q has no tenants", u.Scheme)
	}
	u.RawQuery = q.Encode()
	cfg.Backend = u.String()
	return cfg, nil
}

// binlogOptions turns -b/-f/-F/-s into the memory backend's binlog; nil without -b.
func binlogOptions(cfg configs.Config, log *slog.Logger) *binlog.Options {
	if cfg.Binlog.Dir == "" {
		return nil
	}
	return &binlog.Options{
		Dir:          cfg.Binlog.Dir,
		MaxFileSize:  cfg.Binlog.MaxSize,
		SyncInterval: time.Duration(cfg.Binlog.FsyncMS) * time.Millisecond,
		NoSync:       cfg.Binlog.NoFsync,
		MaxJobSize:   int(cfg.MaxJobSize),
		Logger:       log,
	}
}

// redactedURL is raw fit for a log line: any password replaced by "xxxxx".
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	if _, has := u.User.Password(); !has {
		return raw // Redacted would also turn "memory://" into "memory:"
	}
	return u.Redacted()
}

// memoryURL refuses anything after memory:// (a host, path, parameters): the in-memory store
// takes its settings from the binlog flags, and a URL part it would ignore is a mistake.
func memoryURL(u *url.URL) error {
	for _, part := range []struct{ name, value string }{
		{"host", u.Host}, {"path", u.Path + u.Opaque}, {"parameters", u.RawQuery}, {"fragment", u.Fragment},
	} {
		if part.value != "" {
			return fmt.Errorf("backend: memory:// takes no %s (got %q); its settings are the binlog flags (-b, -f, -F, -s)", part.name, part.value)
		}
	}
	if u.User != nil {
		return errors.New("backend: memory:// takes no user or password")
	}
	return nil
}
