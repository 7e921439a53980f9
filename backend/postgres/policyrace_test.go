package postgres

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// Two gateways on one schema never exceed a max-reserved cap together.
func TestTwoGatewaysShareACap(t *testing.T) {
	schema := testSchema(t)
	backendtest.RunCapShared(t, func(t *testing.T) backend.Backend { return newTestBackend(t, nil, schema) })
}

// The policy cases of two gateways sharing one schema.
func TestSharedPolicies(t *testing.T) {
	backendtest.RunSharedPolicies(t, func(t *testing.T, clock backend.Clock) (backend.Backend, backend.Backend) {
		schema := testSchema(t)
		return newTestBackend(t, clock, schema), newTestBackend(t, clock, schema)
	})
}
