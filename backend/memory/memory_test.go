package memory_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/backend/memory"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
		b := memory.New(memory.Options{Clock: clock})
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

// One process holds the store: both "gateways" are the same backend.
func TestConformanceSharedPolicies(t *testing.T) {
	backendtest.RunSharedPolicies(t, func(t *testing.T, clock backend.Clock) (backend.Backend, backend.Backend) {
		b := memory.New(memory.Options{Clock: clock})
		t.Cleanup(func() { _ = b.Close() })
		return b, b
	})
}
