package ops

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Readiness's transitions, each with its reason; the store's outage counts only once it has
// lasted storeDownAfter.
func TestReadinessTransitions(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	r := NewReadiness(5*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.now = func() time.Time { return now }
	check := func(ready bool, reason string) {
		t.Helper()
		gotReady, gotReason := r.Check()
		require.Equal(t, ready, gotReady)
		require.Equal(t, reason, gotReason)
	}
	check(false, "starting: opening the store")
	r.SetOpen()
	check(true, "ready")
	r.StoreAnswered(errors.New("connection refused"))
	now = now.Add(4 * time.Second)
	check(true, "ready") // not yet storeDownAfter
	now = now.Add(2 * time.Second)
	check(false, "store unreachable for 6s")
	r.StoreAnswered(nil)
	check(true, "ready")
	r.SetDraining()
	check(false, "draining (SIGUSR1): put answers DRAINING")
	r.SetStopping()
	check(false, "shutting down")
}
