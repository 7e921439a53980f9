package gateway_test

import (
	"testing"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// transcripts112 are the transcripts in 1.12 mode: every transcript but those of 1.13-only
// behaviour, with 1.12's expected bytes, and 1.12's own.
func transcripts112() []gatewaytest.Transcript {
	var out []gatewaytest.Transcript
	for _, tr := range append(gatewaytest.Transcripts(), gatewaytest.OrderTranscripts()...) {
		if tr.Version != "1.13" {
			out = append(out, gatewaytest.As112(tr))
		}
	}
	return append(out, gatewaytest.Transcripts112()...)
}

// With --compat 1.12, beangate answers every transcript with 1.12's bytes (no quote left
// optional).
func TestTranscriptsOverMemoryCompat112(t *testing.T) {
	for _, tr := range transcripts112() {
		t.Run(tr.Name, func(t *testing.T) {
			t.Parallel()
			addr, _ := gatewaytest.StartServer(t, newMemory(t), gateway.Config{MaxJobSize: tr.MaxJobSize, Compat: gateway.Compat112})
			gatewaytest.Play(t, addr, tr, false)
		})
	}
}

// The same transcripts against Debian's beanstalkd 1.12 byte for byte, with no allowance for
// version differences: only beanstalkd's bugs that beangate does not copy (Differs, other than
// 1.13-only behaviour) are skipped.
func TestTranscriptsAgainstRealBeanstalkd112(t *testing.T) {
	bin := gatewaytest.DebianBeanstalkd(t)
	for _, tr := range transcripts112() {
		t.Run(tr.Name, func(t *testing.T) {
			if tr.Differs != "" {
				t.Skip("beanstalkd bug beangate does not copy: " + tr.Differs)
			}
			t.Parallel()
			addr := gatewaytest.StartBeanstalkd(t, bin, tr.MaxJobSize)
			gatewaytest.Play(t, addr, tr, false)
		})
	}
}
