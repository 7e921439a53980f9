package gateway_test

import (
	"testing"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestAccessOverMemory: principals, grants, tenants and quotas, each tenant its own memory engine.
func TestAccessOverMemory(t *testing.T) {
	gatewaytest.RunAccess(t, newMemory)
}
