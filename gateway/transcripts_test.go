package gateway_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
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
