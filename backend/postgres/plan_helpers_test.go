package postgres

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// planNode is one node of a plan from EXPLAIN (FORMAT JSON).
type planNode map[string]any

// explainAnalyze runs sql under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) on q (a connection or a
// transaction, so that the backend's own planner settings apply) and returns the plan's root.
func explainAnalyze(t *testing.T, ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, sql string, args ...any) planNode {
	t.Helper()
	var out []byte
	require.NoError(t, q.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+sql, args...).Scan(&out))
	var plan []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal(out, &plan))
	return plan[0].Plan
}

// pages is how many buffer pages the node read, with its children.
func (n planNode) pages() int {
	return int(n["Shared Hit Blocks"].(float64) + n["Shared Read Blocks"].(float64))
}

// walk visits n and every node below it, depth first.
func (n planNode) walk(visit func(planNode)) {
	visit(n)
	children, _ := n["Plans"].([]any)
	for _, child := range children {
		planNode(child.(map[string]any)).walk(visit)
	}
}
