package gateway_test

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestTimedSessionsAgainstRealBeanstalkd: the memory backend in gatewaytest.RunTimedDifferential
// (TTR expiries, delays, pauses, kicks, waiting reserves and disconnects in real time, replies and
// their timing compared with the real server's).
func TestTimedSessionsAgainstRealBeanstalkd(t *testing.T) {
	gatewaytest.RunTimedDifferential(t, func(t *testing.T) backend.Backend { return newMemory(t) })
}
