package gatewaytest

import (
	"testing"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// RunTranscripts plays every transcript against a gateway.Server over a fresh backend from
// newBackend (which registers its own cleanup), each transcript in parallel.
func RunTranscripts(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	for _, tr := range Transcripts() {
		t.Run(tr.Name, func(t *testing.T) {
			t.Parallel()
			addr, _ := StartServer(t, newBackend(t), gateway.Config{MaxJobSize: tr.MaxJobSize})
			Play(t, addr, tr, false)
		})
	}
}
