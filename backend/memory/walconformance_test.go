package memory_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/internal/clocktest"
)

// The whole contract holds with the binlog on (-f0, so every write also waits for its fsync,
// and tiny files, so rotation and compaction run inside the cases).
func TestConformanceWithBinlog(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
		b, err := memory.Open(memory.Options{Clock: clock, Binlog: &binlog.Options{Dir: t.TempDir(), MaxFileSize: 1024}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

// Cases that restart the backend mid-case: closed, then reopened on the same directory with the
// same clock, as a server restarted on its binlog.
func TestConformanceAcrossRestarts(t *testing.T) {
	dirs := sync.Map{} // backend → its directory
	open := func(t *testing.T, clock backend.Clock, dir string) backend.Backend {
		b, err := memory.Open(memory.Options{Clock: clock, Binlog: &binlog.Options{Dir: dir, MaxFileSize: 1024}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		dirs.Store(b, dir)
		return b
	}
	backendtest.RunRestarts(t, func(t *testing.T, clock backend.Clock) backend.Backend {
		return open(t, clock, t.TempDir())
	}, func(t *testing.T, old backend.Backend, clock *clocktest.Fake) backend.Backend {
		dir, _ := dirs.Load(old)
		require.NoError(t, old.(*memory.Backend).Close())
		return open(t, clock, dir.(string))
	})
}
