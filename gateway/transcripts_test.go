package gateway_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

func newMemory(t *testing.T) backend.Backend { return newMemoryTB(t) }

func newMemoryTB(t testing.TB) backend.Backend {
	b := memory.New(memory.Options{})
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestTranscriptsOverMemory(t *testing.T) {
	gatewaytest.RunTranscripts(t, newMemory)
}

// TestOrderTranscriptsOverMemory: the memory backend keeps beanstalkd's tube order.
func TestOrderTranscriptsOverMemory(t *testing.T) {
	for _, tr := range gatewaytest.OrderTranscripts() {
		t.Run(tr.Name, func(t *testing.T) {
			t.Parallel()
			addr, _ := gatewaytest.StartServer(t, newMemory(t), gateway.Config{MaxJobSize: tr.MaxJobSize})
			gatewaytest.Play(t, addr, tr, false)
		})
	}
}

// binlogFigures turns the figures of a server without a binlog into those of one with it: real
// binlog-* stats and file numbers, and the binlog-write-errors key.
var binlogFigures = strings.NewReplacer(
	"\nfile: 0\n", "\nfile: {n}\n",
	"binlog-oldest-index: 0\nbinlog-current-index: 0\nbinlog-records-migrated: 0\nbinlog-records-written: 0\nbinlog-max-size: 10485760\n",
	"binlog-oldest-index: {n}\nbinlog-current-index: {n}\nbinlog-records-migrated: {n}\nbinlog-records-written: {n}\nbinlog-max-size: 1024\nbinlog-write-errors: 0\n",
	"{*}\ndraining: false", "{*}\n{*}\ndraining: false",
)

// TestTranscriptsOverMemoryWithBinlog: with -b -f0 and tiny files (so that rotation and
// compaction run inside them) every transcript reads the same bytes, but for the binlog's own
// figures (binlogFigures).
func TestTranscriptsOverMemoryWithBinlog(t *testing.T) {
	for _, tr := range gatewaytest.Transcripts() {
		for i := range tr.Steps {
			tr.Steps[i].Expect = binlogFigures.Replace(tr.Steps[i].Expect)
		}
		t.Run(tr.Name, func(t *testing.T) {
			t.Parallel()
			b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: t.TempDir(), MaxFileSize: 1024}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			addr, _ := gatewaytest.StartServer(t, b, gateway.Config{MaxJobSize: tr.MaxJobSize})
			gatewaytest.Play(t, addr, tr, false)
		})
	}
}
