package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// Every scenario (but delayed, which needs a second of real time per job) completes a short
// round against a real beanstalkd with its exactly-once checks passing.
func TestScenariosPassTheirChecksOnBeanstalkd(t *testing.T) {
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	base := options{Conns: 4, Pipeline: 4, Body: 100, Tubes: 2, Duration: 200 * time.Millisecond,
		Backlog: 100, Interval: 5 * time.Millisecond}
	tests := []struct {
		scenario string
		tweak    func(*options)
	}{
		{"put", func(o *options) {}},
		{"put", func(o *options) { o.Jobs = 50 }},
		{"cycle", func(o *options) {}},
		{"cycle", func(o *options) { o.Conns = 1 }},
		{"tubes", func(o *options) { o.Tubes = 3 }},
		{"drain", func(o *options) { o.Jobs = 500 }},
		{"reserve-wait", func(o *options) { o.Conns = 8 }},
		{"open-loop", func(o *options) { o.Rate, o.Producers, o.Warmup = 200, 2, 50*time.Millisecond }},
		{"conns", func(o *options) { o.Conns = 50 }},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			opts := base
			tt.tweak(&opts)
			r := newRound(opts, target{Name: "beanstalkd", Addr: addr}, &serverState{})
			metrics, err := runRound(scenarios[tt.scenario], r, tt.scenario != "conns")
			require.NoError(t, err)
			require.NotEmpty(t, metrics)
			if opts.Jobs > 0 && tt.scenario == "put" {
				require.Equal(t, int64(opts.Jobs), r.ledger.inserted.Load())
			}
		})
	}
}
