package backendtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that records whether the test was failed or skipped.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.failed = format }
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = format }

func TestUnavailableFailsInCIAndSkipsElsewhere(t *testing.T) {
	tests := []struct {
		ci         string
		fail, skip bool
	}{
		{"true", true, false},
		{"", false, true},
		{"false", false, true},
	}
	for _, tt := range tests {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recorder{TB: t}
			Unavailable(r, "redis at %s unreachable", "127.0.0.1:6379")
			require.Equal(t, tt.fail, r.failed != "")
			require.Equal(t, tt.skip, r.skipped != "")
		})
	}
}
