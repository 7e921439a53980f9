package migrate

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The report's rate keeps the digits a slow run needs, and its skipped line says what happened
// at the source: an online source deletes what an earlier run imported, a binlog is left as it
// was.
func TestReportSaysTheRateAndWhatTheSourceDid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		moved       uint64
		elapsed     time.Duration
		deletes     bool
		wantRate    string
		wantSkipped string
	}{
		{"FastBinlog", 50000, 2 * time.Second, false, "(25000 jobs/s)", "(the source is left as it was)"},
		{"OnlineFewPerSecond", 9, 4 * time.Second, true, "(2.2 jobs/s)", "(deleted at the source now)"},
		{"SlowOnline", 3, 40 * time.Second, true, "(4.5 jobs/min)", "(deleted at the source now)"},
		{"VerySlow", 1, time.Hour, true, "(0.017 jobs/min)", "(deleted at the source now)"},
		{"NothingMoved", 0, time.Second, false, "(no jobs moved)", "(the source is left as it was)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Report{Source: "src", Destination: "dst", Moved: tt.moved, AlreadyImported: 2, Elapsed: tt.elapsed, SourceDeletes: tt.deletes}
			var out bytes.Buffer
			r.Print(&out)
			require.Contains(t, out.String(), "migrated from src to dst in "+tt.elapsed.String()+" "+tt.wantRate+"\n")
			require.Contains(t, out.String(), "  skipped:          2 already imported by an earlier run "+tt.wantSkipped+"\n")
		})
	}
}
