package redis_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

func TestTranscripts(t *testing.T) {
	requireRedis(t)
	gatewaytest.RunTranscripts(t, func(t *testing.T) backend.Backend {
		return newBackend(t, newPrefix(t), nil, 0)
	})
}

// TestTimedSessionsAgainstRealBeanstalkd: gatewaytest.RunTimedDifferential over Redis.
func TestTimedSessionsAgainstRealBeanstalkd(t *testing.T) {
	requireRedis(t)
	gatewaytest.RunTimedDifferential(t, func(t *testing.T) backend.Backend {
		return newBackend(t, newPrefix(t), nil, 0)
	})
}

// TestAccess: principals, grants, tenants and quotas over Redis, each tenant on its own prefix.
func TestAccess(t *testing.T) {
	requireRedis(t)
	gatewaytest.RunAccess(t, func(t *testing.T) backend.Backend {
		return newBackend(t, newPrefix(t), nil, 0)
	})
}
