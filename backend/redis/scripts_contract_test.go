package redis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every script in lua/ (lib.lua and spread_lib.lua hold helpers, not operations) opens with its contract: a
// comment block that states its KEYS, its ARGV and what it returns, so that a reader (or a
// caller in another language) needs nothing else.
func TestEveryScriptOpensWithItsContract(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("lua", "*.lua"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if name := filepath.Base(f); name == "lib.lua" || name == "spread_lib.lua" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			var header strings.Builder
			for _, line := range strings.Split(string(src), "\n") {
				if !strings.HasPrefix(line, "--") {
					break
				}
				header.WriteString(line + "\n")
			}
			for _, part := range []string{"-- KEYS", "-- ARGV", "-- returns"} {
				require.Contains(t, header.String(), part, "the opening comment of %s", f)
			}
		})
	}
}
