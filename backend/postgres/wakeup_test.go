package postgres

import (
	"testing"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A reserve blocked on gateway B is answered when a job becomes ready through gateway A,
// whichever way it becomes ready. B's re-poll is switched off (an hour), so only a NOTIFY from
// A's commit (or, for a job that matures by time alone, the timer B set for the next due
// moment) can serve it; the multi-gateway suite's wake-up case would also pass on B's
// one-second poll.
func TestBlockedReserveIsWokenByAJobBecomingReadyOnAnotherGateway(t *testing.T) {
	admin(t)
	gatewaytest.RunWakeUps(t, func(t *testing.T) (backend.Backend, backend.Backend) {
		schema := testSchema(t)
		a, b := newTestBackend(t, nil, schema), newTestBackend(t, nil, schema)
		b.poll = time.Hour
		return a, b
	})
}
