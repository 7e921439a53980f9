package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
)

// These tests use t.Setenv, so none of them is parallel.

// isolateEnv blanks every BEANGATE_* variable of the surrounding environment for the test
// (viper treats an empty variable as unset).
func isolateEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, EnvPrefix+"_") {
			t.Setenv(name, "")
		}
	}
}

func parsedFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs)
	require.NoError(t, fs.Parse(args))
	return fs
}

func writeFile(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "beangate.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	return path
}

func TestLoadWithNothingGivenIsDefaults(t *testing.T) {
	isolateEnv(t)
	cfg, warnings, err := Load(parsedFlags(t))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Equal(t, Defaults(), cfg)
	require.Equal(t, "127.0.0.1", cfg.Listen, "loopback by default: the protocol has no auth")
}

func TestLoadPrecedence(t *testing.T) {
	file := writeFile(t, `
port: 1001
max_job_size: 1000
backend: redis://file:6379/0
log:
  level: warn
`)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want func(*Config)
	}{
		{
			name: "FileOverDefaults",
			args: []string{"--config", file},
			want: func(c *Config) {
				c.Port, c.MaxJobSize, c.Backend, c.Log.Level = 1001, 1000, "redis://file:6379/0", "warn"
			},
		},
		{
			name: "EnvOverFile",
			env:  map[string]string{"BEANGATE_PORT": "2002", "BEANGATE_LOG_LEVEL": "error", "BEANGATE_MAX_JOB_SIZE": "2000"},
			args: []string{"--config", file},
			want: func(c *Config) {
				c.Port, c.MaxJobSize, c.Backend, c.Log.Level = 2002, 2000, "redis://file:6379/0", "error"
			},
		},
		{
			name: "FlagOverEnv",
			env:  map[string]string{"BEANGATE_PORT": "2002", "BEANGATE_BACKEND": "postgres://env/db"},
			args: []string{"--config", file, "-p", "3003", "--backend", "memory://", "-z", "3000"},
			want: func(c *Config) {
				c.Port, c.MaxJobSize, c.Backend, c.Log.Level = 3003, 3000, "memory://", "warn"
			},
		},
		{
			name: "ConfigFileFromEnv",
			env:  map[string]string{"BEANGATE_CONFIG": file},
			want: func(c *Config) {
				c.Port, c.MaxJobSize, c.Backend, c.Log.Level = 1001, 1000, "redis://file:6379/0", "warn"
			},
		},
		{
			name: "BeanstalkdSpellings",
			args: []string{"-l", "0.0.0.0", "-p11301", "-VV", "-z", "70000"},
			want: func(c *Config) { c.Listen, c.Port, c.Verbose, c.MaxJobSize = "0.0.0.0", 11301, 2, 70000 },
		},
		{
			name: "BinlogFlagsAsBeanstalkd",
			args: []string{"-b", "/var/lib/beanstalkd", "-f0", "-F", "-s", "4096"},
			want: func(c *Config) {
				c.Binlog = Binlog{Dir: "/var/lib/beanstalkd", FsyncMS: 0, NoFsync: true, MaxSize: 4096}
			},
		},
		{
			name: "BinlogFromEnvAndFile",
			env:  map[string]string{"BEANGATE_BINLOG_DIR": "/env/dir", "BEANGATE_BINLOG_FSYNC_MS": "7"},
			args: []string{"--config", writeFile(t, "binlog:\n  dir: /file/dir\n  max_size: 8192\n")},
			want: func(c *Config) { c.Binlog = Binlog{Dir: "/env/dir", FsyncMS: 7, MaxSize: 8192} },
		},
		{
			name: "MetricsListenerFromFlag",
			args: []string{"--http", "127.0.0.1:9111", "--metrics-http", "10.0.0.5:9110"},
			want: func(c *Config) { c.HTTP, c.Metrics.HTTP = "127.0.0.1:9111", "10.0.0.5:9110" },
		},
		{
			name: "MetricsListenerFromEnv",
			env:  map[string]string{"BEANGATE_METRICS_HTTP": "10.0.0.5:9110"},
			want: func(c *Config) { c.Metrics.HTTP = "10.0.0.5:9110" },
		},
		{
			name: "MetricsListenerFromFile",
			args: []string{"--config", writeFile(t, "metrics:\n  http: 10.0.0.5:9110\n")},
			want: func(c *Config) { c.Metrics.HTTP = "10.0.0.5:9110" },
		},
		{
			name: "StoreOpenTimeoutFromFlag",
			args: []string{"--store-open-timeout", "2m"},
			want: func(c *Config) { c.StoreOpenTimeout = 2 * time.Minute },
		},
		{
			name: "StoreOpenTimeoutFromEnv",
			env:  map[string]string{"BEANGATE_STORE_OPEN_TIMEOUT": "90s"},
			want: func(c *Config) { c.StoreOpenTimeout = 90 * time.Second },
		},
		{
			name: "StoreOpenTimeoutFromFile",
			args: []string{"--config", writeFile(t, "store_open_timeout: 5m\n")},
			want: func(c *Config) { c.StoreOpenTimeout = 5 * time.Minute },
		},
		{
			name: "OtherToolsVariablesIgnored",
			env: map[string]string{"BEANGATE_CTL_ADDR": "h:1", "BEANGATE_CTL_TOKEN": "t", "BEANGATE_TEST_IMAGE": "beangate:dev",
				"BEANGATE_TIMED_SESSIONS": "4", "BEANGATE_REFERENCE_BEANSTALKD": "/bin/beanstalkd", "BEANGATE_ARTIFACTS": "/tmp",
				"BEANGATE_REDIS_URL": "redis://h", "BEANGATE_PG_URL": "postgres://h", "BEANGATE_WIBBLE": ""},
			want: func(*Config) {},
		},
		{
			name: "DurationsFromEnvAndFlag",
			env:  map[string]string{"BEANGATE_SHUTDOWN_TIMEOUT": "3s"},
			args: []string{"--backend-timeout", "250ms"},
			want: func(c *Config) { c.ShutdownTimeout, c.BackendTimeout = 3*time.Second, 250*time.Millisecond },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolateEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			cfg, _, err := Load(parsedFlags(t, tt.args...))
			require.NoError(t, err)
			want := Defaults()
			tt.want(&want)
			require.Equal(t, want, cfg)
		})
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		file    string
		wantErr string
	}{
		{name: "BinlogFlagWithRedis", args: []string{"--backend", "redis://h:6379/0", "-b", "/var/lib/beanstalkd"}, wantErr: "-b/--binlog-dir: the binlog belongs to the memory backend"},
		{name: "FsyncZeroFlagWithPostgres", args: []string{"--backend", "postgres://h/db", "-f0"}, wantErr: "-f/--binlog-fsync-ms: the binlog belongs to the memory backend"},
		{name: "NoFsyncFlagWithRedis", args: []string{"--backend", "redis://h:6379/0", "-F"}, wantErr: "-F/--binlog-no-fsync"},
		{name: "BinlogSizeFlagWithRedis", args: []string{"--backend", "redis://h:6379/0", "-s", "1000"}, wantErr: "-s/--binlog-max-size"},
		{name: "BinlogEnvWithRedis", env: map[string]string{"BEANGATE_BINLOG_DIR": "/tmp", "BEANGATE_BACKEND": "redis://h:6379/0"}, wantErr: "binlog.dir (config file or BEANGATE_BINLOG_DIR)"},
		{name: "BinlogFileWithPostgres", file: "backend: postgres://h/db\nbinlog:\n  no_fsync: true\n", wantErr: "binlog.no_fsync (config file or BEANGATE_BINLOG_NO_FSYNC)"},
		{name: "NegativeFsync", args: []string{"-f", "-1"}, wantErr: "binlog.fsync_ms -1: must not be negative"},
		{name: "ZeroBinlogSize", args: []string{"-s", "0"}, wantErr: "binlog.max_size 0: must be at least 1"},
		{name: "UnknownFileKey", file: "prot: 11300\n", wantErr: "unknown key prot (did you mean port?)"},
		{name: "UnknownNestedFileKey", file: "log:\n  formt: json\n", wantErr: "unknown key log.formt (did you mean log.format?)"},
		{name: "UnknownPolicyKey", file: "policies:\n  - tube: a\n    rat: 3\n", wantErr: "unknown key policies[0].rat"},
		{name: "BadFileValue", file: "port: abc\n", wantErr: "beangate.yaml: port: cannot parse value as 'int'"},
		{name: "BadFileDuration", file: "tls:\n  cert: c\n  key: k\nhandshake_timeout: soon\n", wantErr: "beangate.yaml: handshake_timeout: time: invalid duration"},
		{name: "BadEnvValue", env: map[string]string{"BEANGATE_PORT": "abc"}, wantErr: "BEANGATE_PORT: cannot parse value as 'int'"},
		{name: "BadEnvDuration", env: map[string]string{"BEANGATE_SHUTDOWN_TIMEOUT": "soon"}, wantErr: "BEANGATE_SHUTDOWN_TIMEOUT: time: invalid duration"},
		{name: "MisspeltEnv", env: map[string]string{"BEANGATE_BACKEN": "redis://h:6379/0"}, wantErr: "environment: BEANGATE_BACKEN is not a setting (did you mean BEANGATE_BACKEND?)"},
		{name: "SwappedLettersEnv", env: map[string]string{"BEANGATE_PROT": "1"}, wantErr: "BEANGATE_PROT is not a setting (did you mean BEANGATE_PORT?)"},
		{name: "NestedEnv", env: map[string]string{"BEANGATE_LOG_LEVLE": "debug"}, wantErr: "BEANGATE_LOG_LEVLE is not a setting (did you mean BEANGATE_LOG_LEVEL?)"},
		{name: "UnknownEnv", env: map[string]string{"BEANGATE_WIBBLE": "1"}, wantErr: "environment: BEANGATE_WIBBLE is not a setting"},
		{name: "MissingFile", args: []string{"--config", "/nonexistent/beangate.yaml"}, wantErr: "config file /nonexistent/beangate.yaml"},
		{name: "InvalidEnvValue", env: map[string]string{"BEANGATE_PORT": "70000"}, wantErr: "port 70000: must be 0..65535"},
		{name: "NonNumericEnv", env: map[string]string{"BEANGATE_MAX_JOB_SIZE": "big"}, wantErr: "BEANGATE_MAX_JOB_SIZE: cannot parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolateEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := tt.args
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, tt.file))
			}
			_, _, err := Load(parsedFlags(t, args...))
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestLoadClampsMaxJobSizeWithWarning(t *testing.T) {
	isolateEnv(t)
	cfg, warnings, err := Load(parsedFlags(t, "-z", "2000000000"))
	require.NoError(t, err)
	require.Equal(t, int64(gateway.MaxJobSizeLimit), cfg.MaxJobSize)
	require.Equal(t, []string{"max_job_size 2000000000 is above the limit; using 1073741824"}, warnings)
}

// A config file named with a leading "-" is optional: missing, the other settings apply with a
// warning. Named without it, by flag or environment, it must exist. Either way a file that is
// there is read, and one that cannot be read is an error.
func TestLoadConfigFile(t *testing.T) {
	present := writeFile(t, "port: 1001\n")
	missing := filepath.Join(t.TempDir(), "beangate.yaml")
	tests := []struct {
		name     string
		flag     string // --config
		env      string // BEANGATE_CONFIG
		wantPort int
		warning  string
		wantErr  string
	}{
		{name: "FlagMissing", flag: missing, wantErr: "config file " + missing},
		{name: "EnvMissing", env: missing, wantErr: "config file " + missing},
		{name: "FlagOptionalMissing", flag: "-" + missing, wantPort: 11300, warning: "optional config file " + missing + " does not exist: starting without it"},
		{name: "EnvOptionalMissing", env: "-" + missing, wantPort: 11300, warning: "optional config file " + missing + " does not exist: starting without it"},
		{name: "FlagPresent", flag: present, wantPort: 1001},
		{name: "EnvOptionalPresent", env: "-" + present, wantPort: 1001},
		{name: "FlagOptionalPresent", flag: "-" + present, wantPort: 1001},
		{name: "EnvOptionalUnreadable", env: "-" + t.TempDir(), wantErr: "config file "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolateEnv(t)
			t.Setenv(EnvPrefix+"_CONFIG", tt.env)
			var args []string
			if tt.flag != "" {
				args = []string{"--config", tt.flag}
			}
			cfg, warnings, err := Load(parsedFlags(t, args...))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantPort, cfg.Port)
			if tt.warning == "" {
				require.Empty(t, warnings)
			} else {
				require.Equal(t, []string{tt.warning}, warnings)
			}
		})
	}
}
