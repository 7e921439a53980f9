package ops_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/gateway/ops"
)

// pinger is a memory store that answers the readiness probe as told.
type pinger struct {
	backend.Backend
	err error
}

func (p pinger) Ping(context.Context) error { return p.err }

// The readiness probe's pings are timed like every other store call, so their latency under load
// can be read off /metrics; a failed ping counts as a store error.
func TestPingsAreMeasured(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		errors float64
	}{
		{"answered", nil, 0},
		{"failed", errors.New("connection refused"), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			b := ops.InstrumentBackend(pinger{Backend: memory.New(memory.Options{}), err: tt.err}, reg)
			for range 3 {
				require.ErrorIs(t, b.Ping(context.Background()), tt.err)
			}
			families, err := reg.Gather()
			require.NoError(t, err)
			byName := map[string]float64{}
			for _, f := range families {
				for _, m := range f.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == "op" && l.GetValue() == "ping" {
							if h := m.GetHistogram(); h != nil {
								byName[f.GetName()] = float64(h.GetSampleCount())
							} else {
								byName[f.GetName()] = m.GetCounter().GetValue()
							}
						}
					}
				}
			}
			require.Equal(t, 3.0, byName["beangate_backend_call_duration_seconds"])
			require.Equal(t, 3*tt.errors, byName["beangate_backend_call_errors_total"])
		})
	}
}
