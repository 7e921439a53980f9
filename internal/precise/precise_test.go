package precise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// AfterFunc arms the runtime's timer early and sleeps the rest: f must still never
// run before its time.
func TestAfterFuncNeverFiresEarly(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, 100 * time.Microsecond, timerLead, timerLead + 300*time.Microsecond, 5 * time.Millisecond} {
		start := time.Now()
		fired := make(chan time.Time, 1)
		AfterFunc(d, func() { fired <- time.Now() })
		select {
		case at := <-fired:
			require.GreaterOrEqual(t, at.Sub(start), d, "fired early for %v", d)
		case <-time.After(10 * time.Second):
			t.Fatalf("timer for %v never fired", d)
		}
	}
}
