package redis_test

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

func TestMultiGateway(t *testing.T) {
	requireRedis(t)
	prefix := newPrefix(t)
	gatewaytest.RunMultiGateway(t, func(t *testing.T) backend.Backend {
		return newBackend(t, prefix, nil, time.Second)
	})
}

// TestPolicies runs the policy suite with its workers on two gateways of one fleet: two
// Backends on one key prefix.
func TestPolicies(t *testing.T) {
	requireRedis(t)
	gatewaytest.RunPolicies(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		prefix := newPrefix(t)
		return newBackend(t, prefix, nil, time.Second), newBackend(t, prefix, nil, time.Second)
	})
}

// TestTenantQuotaAcrossGateways: max_jobs counted fleet-wide, two gateways on one prefix.
func TestTenantQuotaAcrossGateways(t *testing.T) {
	requireRedis(t)
	gatewaytest.RunTenantQuotaAcrossGateways(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		prefix := newPrefix(t)
		return newBackend(t, prefix, nil, time.Second), newBackend(t, prefix, nil, time.Second)
	})
}
