package gateway_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// The policy suite over the memory store: two gateways on one Backend.
func TestPoliciesOverMemory(t *testing.T) {
	gatewaytest.RunPolicies(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		b := newMemory(t)
		return b, b
	})
}
