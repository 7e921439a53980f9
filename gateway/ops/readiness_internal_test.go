package ops

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Readiness's transitions, each with its reason; the store's outage counts only once it has
// lasted storeDownAfter. Each transition is logged once: not each second the outage lasts, and
// the store's outage and recovery are left to the store's own lines.
func TestReadinessTransitions(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	var log bytes.Buffer
	r := NewReadiness(5*time.Second, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
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
	for range 3 {
		now = now.Add(time.Second)
		r.StoreAnswered(errors.New("connection refused"))
	}
	check(false, "store unreachable for 9s")
	r.StoreAnswered(nil)
	check(true, "ready")
	r.SetDraining()
	check(false, "draining (SIGUSR1): put answers DRAINING")
	r.SetStopping()
	check(false, "shutting down")
	require.Equal(t, strings.Join([]string{
		`level=INFO msg="readiness changed" ready=true reason=ready`,
		`level=INFO msg="readiness changed" ready=false reason="store unreachable for 6s"`,
		`level=INFO msg="readiness changed" ready=true reason=ready`,
		`level=INFO msg="readiness changed" ready=false reason="draining (SIGUSR1): put answers DRAINING"`,
		`level=INFO msg="readiness changed" ready=false reason="shutting down"`,
	}, "\n")+"\n", log.String())
}
