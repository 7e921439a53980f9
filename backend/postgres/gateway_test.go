package postgres

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

func TestTranscripts(t *testing.T) {
	admin(t)
	gatewaytest.RunTranscripts(t, func(t *testing.T) backend.Backend {
		return newTestBackend(t, nil)
	})
}

// TestTimedSessionsAgainstRealBeanstalkd: gatewaytest.RunTimedDifferential over Postgres.
func TestTimedSessionsAgainstRealBeanstalkd(t *testing.T) {
	admin(t)
	gatewaytest.RunTimedDifferential(t, func(t *testing.T) backend.Backend {
		return newTestBackend(t, nil)
	})
}

// TestMultiGateway runs several Backends, as separate gateway processes would, on one schema.
func TestMultiGateway(t *testing.T) {
	admin(t)
	schema := testSchema(t)
	gatewaytest.RunMultiGateway(t, func(t *testing.T) backend.Backend {
		return newTestBackend(t, nil, schema)
	})
}

// TestPolicies runs the policy suite with its workers on two gateways of one fleet: two
// Backends on one schema.
func TestPolicies(t *testing.T) {
	admin(t)
	gatewaytest.RunPolicies(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		schema := testSchema(t)
		return newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
	})
}

// TestAccess: principals, grants, tenants and quotas over PostgreSQL, each tenant in its own
// schema.
func TestAccess(t *testing.T) {
	admin(t)
	gatewaytest.RunAccess(t, func(t *testing.T) backend.Backend {
		return newTestBackend(t, nil)
	})
}

// TestTenantQuotaAcrossGateways: max_jobs counted fleet-wide, two gateways on one schema.
func TestTenantQuotaAcrossGateways(t *testing.T) {
	admin(t)
	gatewaytest.RunTenantQuotaAcrossGateways(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		schema := testSchema(t)
		return newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
	})
}
