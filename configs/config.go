// Package configs turns flags, BEANGATE_* environment variables, a YAML file and defaults into
// one validated Config. It is the only package that imports viper, and it uses its own
// viper.New() instance so nothing leaks between loads (or between tests).
package configs

import (
	"time"

	"github.com/beangate/beangate/gateway"
)

// Config is beangate's whole process configuration.
type Config struct {
	// Listen is the address to bind: a host or IP, or "unix:PATH" for a unix socket (Port is
	// then ignored). Loopback by default because the protocol has no authentication.
	Listen string `mapstructure:"listen"`
	// Port is the TCP port; 0 picks a free one (handy in tests).
	Port int `mapstructure:"port"`
	// MaxJobSize is the largest put body accepted, in bytes (beanstalkd's -z).
	MaxJobSize int64 `mapstructure:"max_job_size"`
	// Backend names the job store as a URL: memory://, redis://…, rediss://…, postgres://….
	Backend string `mapstructure:"backend"`
	// Verbose is beanstalkd's -V count: 1 logs at debug level, 2 or more below it.
	Verbose int `mapstructure:"verbose"`
	// ShutdownTimeout bounds the graceful stop on SIGTERM/SIGINT before connections are cut.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// BackendTimeout bounds each backend call that does not block by design.
	BackendTimeout time.Duration `mapstructure:"backend_timeout"`
	// Compat is the beanstalkd version answered as: "1.13" (the default) or "1.12" (unquoted
	// names in stats-tube/stats-job, loose reserve-with-timeout), for clients written against 1.12.
	Compat string `mapstructure:"compat"`
	Log    Log    `mapstructure:"log"`
	// Binlog is beanstalkd's -b/-f/-F/-s: the memory backend's persistence, in beanstalkd's
	// own file format. Refused with the Redis and PostgreSQL backends.
	Binlog Binlog `mapstructure:"binlog"`
	// Policies are per-tube policies set in the store at start, replacing any policy the store
	// holds for the same tube pattern (others are kept).
	Policies []Policy `mapstructure:"policies"`
	// Schedules are periodic jobs set in the store at start and on SIGHUP, replacing any
	// schedule the store holds under the same name (others are kept).
	Schedules []Schedule `mapstructure:"schedules"`
	// Fleet: ops listener, TLS, auth, limits (fleet.go); its keys are top-level.
	Fleet `mapstructure:",squash"`
}

// Log configures the process logger (log/slog, to stderr).
type Log struct {
	Format string `mapstructure:"format"` // "text" or "json"
	Level  string `mapstructure:"level"`  // "debug", "info", "warn" or "error"
}

// Binlog holds beanstalkd's write-ahead log settings.
type Binlog struct {
	Dir     string `mapstructure:"dir"`      // -b: empty keeps nothing on disk
	FsyncMS int    `mapstructure:"fsync_ms"` // -f: fsync at most MS ms after a write; 0 before every reply
	NoFsync bool   `mapstructure:"no_fsync"` // -F: never fsync
	MaxSize int64  `mapstructure:"max_size"` // -s: bytes per binlog file
}

const (
	// DefaultPort is beanstalkd's port.
	DefaultPort = 11300
	// DefaultFsyncMS is beanstalkd's default -f (since 1.12).
	DefaultFsyncMS = 50
	// DefaultBinlogMaxSize is beanstalkd's default -s.
	DefaultBinlogMaxSize = 10485760
)

// Defaults returns the configuration used when nothing else is given.
func Defaults() Config {
	return Config{
		Listen:          "127.0.0.1",
		Port:            DefaultPort,
		MaxJobSize:      gateway.DefaultMaxJobSize,
		Backend:         "memory://",
		ShutdownTimeout: 10 * time.Second,
		BackendTimeout:  gateway.DefaultBackendTimeout,
		Compat:          "1.13",
		Log:             Log{Format: "text", Level: "info"},
		Fleet:           defaultFleet(),
		Binlog:          Binlog{FsyncMS: DefaultFsyncMS, MaxSize: DefaultBinlogMaxSize},
	}
}
