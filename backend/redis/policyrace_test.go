package redis_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// Two gateways on one namespace never exceed a max-reserved cap together.
func TestTwoGatewaysShareACap(t *testing.T) {
	requireRedis(t)
	prefix := newPrefix(t)
	backendtest.RunCapShared(t, func(t *testing.T) backend.Backend { return newBackend(t, prefix, nil, 0) })
}

// The policy cases of two gateways sharing one namespace.
func TestSharedPolicies(t *testing.T) {
	requireRedis(t)
	backendtest.RunSharedPolicies(t, func(t *testing.T, clock backend.Clock) (backend.Backend, backend.Backend) {
		prefix := newPrefix(t)
		return newBackend(t, prefix, clock, 0), newBackend(t, prefix, clock, 0)
	})
}
