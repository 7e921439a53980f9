package configs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestValidateAcceptsDefaults(t *testing.T) {
	t.Parallel()
	cfg := Defaults()
	warnings, err := cfg.Validate()
	require.NoError(t, err)
	require.Empty(t, warnings)
}

func TestValidateAcceptsEveryBackendScheme(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"memory://", "redis://localhost:6379/0", "rediss://h:6380", "postgres://u:p@h/db", "postgresql://h/db", "REDIS://h"} {
		cfg := Defaults()
		cfg.Backend = raw
		_, err := cfg.Validate()
		require.NoError(t, err, raw)
	}
}

func TestValidateRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{"EmptyListen", func(c *Config) { c.Listen = "" }, "listen: must not be empty"},
		{"UnixWithoutPath", func(c *Config) { c.Listen = "unix:" }, "listen: unix: needs a socket path"},
		{"NegativePort", func(c *Config) { c.Port = -1 }, "port -1: must be 0..65535"},
		{"PortTooHigh", func(c *Config) { c.Port = 65536 }, "port 65536: must be 0..65535"},
		{"ZeroMaxJobSize", func(c *Config) { c.MaxJobSize = 0 }, "max_job_size 0: must be at least 1"},
		{"EmptyBackend", func(c *Config) { c.Backend = "" }, "backend: must not be empty"},
		{"UnknownScheme", func(c *Config) { c.Backend = "mysql://h/db" }, `backend: unknown scheme "mysql"`},
		{"NoScheme", func(c *Config) { c.Backend = "localhost:6379" }, `backend: unknown scheme "localhost"`},
		{"NegativeVerbose", func(c *Config) { c.Verbose = -1 }, "verbose -1"},
		{"ZeroShutdownTimeout", func(c *Config) { c.ShutdownTimeout = 0 }, "shutdown_timeout 0s: must be positive"},
		{"NegativeBackendTimeout", func(c *Config) { c.BackendTimeout = -time.Second }, "backend_timeout -1s: must be positive"},
		{"NegativeStoreOpenTimeout", func(c *Config) { c.StoreOpenTimeout = -time.Second }, "store_open_timeout -1s: must not be negative"},
		{"LogFormat", func(c *Config) { c.Log.Format = "xml" }, `log.format "xml"`},
		{"LogLevel", func(c *Config) { c.Log.Level = "trace" }, `log.level "trace"`},
		{"BinlogWithRedis", func(c *Config) { c.Binlog.Dir, c.Backend = "/var/lib/beanstalkd", "redis://h:6379/0" }, "binlog: the binlog belongs to the memory backend"},
		{"NegativeFsync", func(c *Config) { c.Binlog.FsyncMS = -1 }, "binlog.fsync_ms -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := Defaults()
			tt.mutate(&cfg)
			_, err := cfg.Validate()
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	cfg := Defaults()
	cfg.Port, cfg.Log.Level = 99999, "loud"
	_, err := cfg.Validate()
	require.ErrorContains(t, err, "port 99999")
	require.ErrorContains(t, err, `log.level "loud"`)
}

func TestValidateNeverQuotesTheBackendURL(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"mysql://user:s3cret@h/db", "postgres://user:s3cret@h:bad/db"} {
		cfg := Defaults()
		cfg.Backend = raw
		_, err := cfg.Validate()
		require.Error(t, err)
		require.NotContains(t, err.Error(), "s3cret")
	}
}
