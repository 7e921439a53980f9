package configs

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The examples are documentation; this keeps them loadable as the keys change.
func TestExampleFilesLoad(t *testing.T) {
	isolateEnv(t)
	files, err := filepath.Glob("*.example.yaml")
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			_, warnings, err := Load(parsedFlags(t, "--config", file))
			require.NoError(t, err)
			require.Empty(t, warnings)
		})
	}
}

func TestFullExampleMatchesDefaults(t *testing.T) {
	isolateEnv(t)
	cfg, _, err := Load(parsedFlags(t, "--config", "beangate.example.yaml"))
	require.NoError(t, err)
	require.Equal(t, Defaults(), cfg)
}
