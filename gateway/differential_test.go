package gateway_test

import (
	"testing"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestTranscriptsAgainstRealBeanstalkd plays the same transcripts that every backend must pass
// against a real beanstalkd (Debian's 1.12): so their expected bytes are the real server's, and
// beangate is compared with it byte for byte (ids are equal since each transcript starts a
// fresh server; times are masked by the patterns; 1.12's unquoted YAML strings are allowed).
// Transcripts that mark a deliberate difference are skipped here, with their reason.
func TestTranscriptsAgainstRealBeanstalkd(t *testing.T) {
	bin := gatewaytest.DebianBeanstalkd(t)
	for _, tr := range append(gatewaytest.Transcripts(), gatewaytest.OrderTranscripts()...) {
		t.Run(tr.Name, func(t *testing.T) {
			if tr.Differs != "" {
				t.Skip("deliberate difference: " + tr.Differs)
			}
			t.Parallel()
			addr := gatewaytest.StartBeanstalkd(t, bin, tr.MaxJobSize)
			gatewaytest.Play(t, addr, tr, true)
		})
	}
}
