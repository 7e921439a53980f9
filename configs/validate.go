package configs

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/beangate/beangate/gateway"
)

// ErrBinlogUnsupported rejects beanstalkd's binlog flags and settings with a shared store.
var ErrBinlogUnsupported = errors.New("the binlog belongs to the memory backend (Redis and PostgreSQL keep jobs durable in their store)")

// BackendSchemes are the URL schemes a backend URL may use.
var BackendSchemes = []string{"memory", "redis", "rediss", "postgres", "postgresql"}

// Validate checks c and reports every problem at once. Like beanstalkd's -z, a MaxJobSize above
// gateway.MaxJobSizeLimit is not an error: it is clamped, and the clamp is returned as a warning.
func (c *Config) Validate() (warnings []string, err error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	switch {
	case c.Listen == "":
		bad("listen: must not be empty")
	case c.Listen == "unix:":
		bad("listen: unix: needs a socket path")
	}
	if c.Port < 0 || c.Port > 65535 {
		bad("port %d: must be 0..65535", c.Port)
	}
	if c.MaxJobSize < 1 {
		bad("max_job_size %d: must be at least 1", c.MaxJobSize)
	} else if c.MaxJobSize > gateway.MaxJobSizeLimit {
		warnings = append(warnings, fmt.Sprintf("max_job_size %d is above the limit; using %d", c.MaxJobSize, gateway.MaxJobSizeLimit))
		c.MaxJobSize = gateway.MaxJobSizeLimit
	}
	if err := validateBackendURL(c.Backend); err != nil {
		errs = append(errs, err)
	}
	if c.Verbose < 0 {
		bad("verbose %d: must not be negative", c.Verbose)
	}
	if c.ShutdownTimeout <= 0 {
		bad("shutdown_timeout %s: must be positive", c.ShutdownTimeout)
	}
	if c.Compat != "1.13" && c.Compat != "1.12" {
		bad("compat %q: must be 1.13 or 1.12", c.Compat)
	}
	if c.BackendTimeout <= 0 {
		bad("backend_timeout %s: must be positive", c.BackendTimeout)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format %q: must be text or json", c.Log.Format)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level %q: must be debug, info, warn or error", c.Log.Level)
	}
	c.Fleet.validate(bad)
	validatePolicies(c.Policies, bad)
	validateSchedules(c.Schedules, bad)
	if c.Binlog.Dir != "" && !isMemory(c.Backend) {
		errs = append(errs, fmt.Errorf("binlog: %w", ErrBinlogUnsupported))
	}
	if c.Binlog.FsyncMS < 0 {
		bad("binlog.fsync_ms %d: must not be negative", c.Binlog.FsyncMS)
	}
	if c.Binlog.MaxSize < 1 {
		bad("binlog.max_size %d: must be at least 1", c.Binlog.MaxSize)
	}
	return warnings, errors.Join(errs...)
}

// isMemory reports whether raw names the in-memory store.
func isMemory(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && strings.EqualFold(u.Scheme, "memory")
}

// validateBackendURL checks the scheme. Its errors never quote the URL itself, which may hold a
// password.
func validateBackendURL(raw string) error {
	if raw == "" {
		return errors.New("backend: must not be empty (memory:// for the in-memory store)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("backend: not a valid URL")
	}
	scheme := strings.ToLower(u.Scheme)
	for _, known := range BackendSchemes {
		if scheme == known {
			return nil
		}
	}
	return fmt.Errorf("backend: unknown scheme %q (want one of %s)", u.Scheme, strings.Join(BackendSchemes, ", "))
}
