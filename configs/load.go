package configs

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix starts every environment variable Load reads: BEANGATE_PORT, BEANGATE_LOG_LEVEL, …
const EnvPrefix = "BEANGATE"

// Load builds the Config from, highest precedence first: the flags of fs given on the command
// line, BEANGATE_* environment variables, the YAML file named by --config (or BEANGATE_CONFIG),
// and Defaults(). fs must carry AddFlags' flags and be parsed already. The result is validated;
// the warnings report values Validate adjusted and an optional file that is missing, for the
// caller to log.
func Load(fs *pflag.FlagSet) (Config, []string, error) {
	if err := checkEnv(os.Environ()); err != nil {
		return Config{}, nil, err
	}
	v := viper.New()
	setDefaults(v)
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for _, keys := range []map[string]string{flagKeys, fleetFlagKeys} {
		for name, key := range keys {
			if f := fs.Lookup(name); f != nil {
				if err := v.BindPFlag(key, f); err != nil {
					return Config{}, nil, err
				}
			}
		}
	}
	var warnings []string
	if path, optional := ConfigFile(configPath(fs)); path != "" {
		if _, err := os.Stat(path); optional && errors.Is(err, os.ErrNotExist) {
			warnings = append(warnings, fmt.Sprintf("optional config file %s does not exist: starting without it", path))
		} else {
			v.SetConfigFile(path)
			v.SetConfigType("yaml")
			if err := v.ReadInConfig(); err != nil {
				return Config{}, nil, fmt.Errorf("config file %s: %w", path, err)
			}
		}
	}
	var cfg Config
	// Exact: a misspelt key in the file is an error, not a silently ignored setting.
	if err := v.UnmarshalExact(&cfg); err != nil {
		return Config{}, nil, decodeError(err, fs, configPath(fs))
	}
	if err := rejectBinlog(v, fs, cfg.Backend); err != nil {
		return Config{}, nil, err
	}
	adjusted, err := cfg.Validate()
	return cfg, append(warnings, adjusted...), err
}

// setDefaults registers Defaults() key by key. The binlog keys get theirs from their flags'
// defaults instead, which viper's IsSet does not count: it must tell whether anyone asked for a
// binlog setting.
func setDefaults(v *viper.Viper) {
	d := Defaults()
	for key, value := range map[string]any{
		"listen":           d.Listen,
		"port":             d.Port,
		"max_job_size":     d.MaxJobSize,
		"backend":          d.Backend,
		"verbose":          d.Verbose,
		"shutdown_timeout": d.ShutdownTimeout,
		"backend_timeout":  d.BackendTimeout,
		"compat":           d.Compat,
		"log.format":       d.Log.Format,
		"log.level":        d.Log.Level,
	} {
		v.SetDefault(key, value)
	}
	for key, value := range fleetDefaults() {
		v.SetDefault(key, value)
	}
}

// ConfigFile reads a --config or BEANGATE_CONFIG value: a leading "-" marks the file optional,
// as it does before a systemd EnvironmentFile=. The systemd unit names its file so, to start
// with the other settings on a host that has none; a file named without the mark must exist,
// so that a mistyped path or a missing mount is an error, not a server on the defaults.
func ConfigFile(value string) (path string, optional bool) {
	if rest, ok := strings.CutPrefix(value, "-"); ok && rest != "" {
		return rest, true
	}
	return value, false
}

// configPath is --config if given, else BEANGATE_CONFIG. It stays outside viper's keys so that
// a "config:" line inside the file is reported as unknown rather than followed.
func configPath(fs *pflag.FlagSet) string {
	if f := fs.Lookup(ConfigFlag); f != nil && f.Changed {
		return f.Value.String()
	}
	return os.Getenv(EnvPrefix + "_CONFIG")
}

// rejectBinlog fails if a binlog setting was given anywhere while the backend is not the memory
// one, naming where: Redis and PostgreSQL keep jobs durable in their store, and a unit file with
// -b must not start a server that silently ignores it.
func rejectBinlog(v *viper.Viper, fs *pflag.FlagSet, backendURL string) error {
	if isMemory(backendURL) {
		return nil
	}
	for _, name := range []string{"binlog-dir", "binlog-fsync-ms", "binlog-no-fsync", "binlog-max-size"} {
		key := flagKeys[name]
		if !v.IsSet(key) {
			continue
		}
		if f := fs.Lookup(name); f != nil && f.Changed {
			return fmt.Errorf("-%s/--%s: %w", f.Shorthand, name, ErrBinlogUnsupported)
		}
		return fmt.Errorf("%s (config file or %s): %w", key, envName(key), ErrBinlogUnsupported)
	}
	return nil
}
