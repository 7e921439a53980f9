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
