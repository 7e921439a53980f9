package memory_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
)

// The whole contract holds with the binlog on (-f0, so every write also waits for its fsync,
// and tiny files, so rotation and compaction run inside the cases).
func TestConformanceWithBinlog(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, clock *backend.FakeClock) backend.Backend {
		b, err := memory.Open(memory.Options{Clock: clock, Binlog: &binlog.Options{Dir: t.TempDir(), MaxFileSize: 1024}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}
