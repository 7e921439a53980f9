package procfs

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    procStat
		wantErr bool
	}{
		{"a postgres backend",
			"4242 (postgres) S 2144 2144 2144 0 -1 4194560 1200 0 0 0 150 37 4 6 20 0 1 0 3000 200000000 3000 18446744073709551615 1 1 0 0 0 0 4194304 19935232 84487 0 0 0 17 1 0 0 0 0 0",
			procStat{ppid: 2144, utime: 1500 * time.Millisecond, stime: 370 * time.Millisecond,
				cutime: 40 * time.Millisecond, cstime: 60 * time.Millisecond}, false},
		{"a name with spaces and parentheses",
			"7 (a b) (c)) R 1 7 7 0 -1 0 0 0 0 0 2 3 0 0 20 0 1 0 10 0 0",
			procStat{ppid: 1, utime: 20 * time.Millisecond, stime: 30 * time.Millisecond}, false},
		{"no name", "7 R 1 2 3", procStat{}, true},
		{"truncated", "7 (x) R 1 7 7", procStat{}, true},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 u 3 0 0 20", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat(tt.line)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// The harness's own process burns CPU in a loop: its tree CPU must grow and count itself.
func TestProcessTreeCPUGrows(t *testing.T) {
	pid := os.Getpid()
	before, err := TreeCPU(pid)
	require.NoError(t, err)
	for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := TreeCPU(pid)
	require.NoError(t, err)
	require.Greater(t, after, before)
}
