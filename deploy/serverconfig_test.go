package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/configs"
)

// serverConfig is the configuration a beangate server started with args, the environment env
// and the files (path in the container: content) would run with, as the server itself reads
// it: an unknown option, key or value fails the test. The --config file (or BEANGATE_CONFIG) is
// read from files, and must be there even when named as optional. It sets the process
// environment: callers must not run in parallel.
func serverConfig(t *testing.T, args []string, env map[string]string, files map[string]string) configs.Config {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, configs.EnvPrefix+"_") {
			t.Setenv(name, "") // restored after the test
			require.NoError(t, os.Unsetenv(name))
		}
	}
	local := func(value string) string {
		path, optional := configs.ConfigFile(value)
		content, ok := files[path]
		require.True(t, ok, "the configuration file %s is not mounted", path)
		file := filepath.Join(t.TempDir(), filepath.Base(path))
		require.NoError(t, os.WriteFile(file, []byte(content), 0o600))
		if optional {
			return "-" + file
		}
		return file
	}
	for name, value := range env {
		if name == configs.EnvPrefix+"_CONFIG" {
			value = local(value)
		}
		t.Setenv(name, value)
	}
	fs := pflag.NewFlagSet("beangate", pflag.ContinueOnError)
	configs.AddFlags(fs)
	require.NoError(t, fs.Parse(args), "options %q", args)
	require.Zero(t, fs.NArg(), "stray arguments in %q", args)
	if f := fs.Lookup(configs.ConfigFlag); f.Changed {
		require.NoError(t, fs.Set(configs.ConfigFlag, local(f.Value.String())))
	}
	cfg, warnings, err := configs.Load(fs)
	require.NoError(t, err, "options %q", args)
	require.Empty(t, warnings, "options %q", args)
	return cfg
}
