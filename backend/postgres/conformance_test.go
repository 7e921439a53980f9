package postgres

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

func TestConformance(t *testing.T) {
	admin(t)
	backendtest.Run(t, func(t *testing.T, clock backend.Clock) backend.Backend {
		return newTestBackend(t, clock)
	})
}
