package postgres

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A store without policies runs statements that touch nothing of the policies: each statement
// with markers has a variant without them, and no variant without policies names a policy's
// table, function or column (what would cost a store that has none).
func TestStatementsWithoutPoliciesTouchNoPolicy(t *testing.T) {
	st, err := loadStatements("s", "o")
	require.NoError(t, err)
	policyOnly := map[string]bool{"lock_policy_tubes": true, "policy_apply": true, "policy_clear": true,
		"policy_list": true, "policy_set": true, "tick_expire": true, "tick_next": true, "tick_reservations": true}
	comment := regexp.MustCompile(`--[^\n]*`)
	touches := regexp.MustCompile(`tube_policy|tube_rates|policies|expires_at|body_hash|/\*-?[PN]\*/`)
	variants := 0
	for name, text := range st {
		if strings.HasSuffix(name, policySuffix) {
			variants++
			require.Contains(t, st, strings.TrimSuffix(name, policySuffix))
			continue
		}
		if policyOnly[name] {
			continue
		}
		require.Empty(t, touches.FindAllString(comment.ReplaceAllString(text, ""), -1), "statement %s", name)
	}
	require.GreaterOrEqual(t, variants, 9)
}
