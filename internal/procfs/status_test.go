package procfs

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSwitches(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{"both", "Name:\tbeangate\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n", 127, false},
		{"one missing", "voluntary_ctxt_switches:\t120\n", 0, true},
		{"not a number", "voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t7\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSwitches(tt.status)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestProcessSwitchesOfThisProcess(t *testing.T) {
	before, err := ContextSwitches(os.Getpid())
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond) // a wait: at least one switch
	after, err := ContextSwitches(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, after, before)
}
