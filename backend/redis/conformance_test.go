package redis_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

func TestConformance(t *testing.T) {
	requireRedis(t)
	backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
		return newBackend(t, newPrefix(t), clock, 0)
	})
}
