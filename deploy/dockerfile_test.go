package deploy

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Dockerfile.source, which CI cannot build (no base image can be pulled), ends in the same
// runtime stage as the Dockerfile CI builds and tests: same user, volume, ports, defaults,
// health check and entry point.
func TestDockerfileSourceRunsAsTheTestedImage(t *testing.T) {
	t.Parallel()
	runtime := func(file string) string {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		_, tail, ok := strings.Cut(string(raw), "\nUSER ")
		require.True(t, ok, "%s has a USER", file)
		return tail
	}
	require.Equal(t, runtime("../Dockerfile"), runtime("../Dockerfile.source"))
	source, err := os.ReadFile("../Dockerfile.source")
	require.NoError(t, err)
	for _, want := range []string{"CGO_ENABLED=0 go build -trimpath", "FROM scratch\n",
		"COPY --from=build --chown=65532:65532 /out/data /data\n", "/etc/ssl/certs/ca-certificates.crt"} {
		require.Contains(t, string(source), want)
	}
}
