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
