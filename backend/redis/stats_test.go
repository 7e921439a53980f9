package redis_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Two gateways on one namespace: the queue figures (job counts, totals, tubes, per-tube
// counters, using, pause) are the same on both, since Redis keeps them; the command and
// connection figures describe the gateway that answers (docs/operations.md, "Stats:
// per gateway or cluster-wide").
func TestStatsAreGlobalExceptConnectionFigures(t *testing.T) {
	t.Parallel()
	prefix := newPrefix(t)
	addrA := startGateway(t, newBackend(t, prefix, nil, time.Second))
	addrB := startGateway(t, newBackend(t, prefix, nil, time.Second))
	a, a2, b := dialWire(t, addrA), dialWire(t, addrA), dialWire(t, addrB)

	for _, cmd := range []struct{ send, want string }{
		{"use jobs", "USING jobs"},
		{"put 0 0 60 1\r\nx", "INSERTED 1"}, // urgent (priority < 1024)
		{"put 2000 0 60 1\r\nx", "INSERTED 2"},
		{"put 2000 3600 60 1\r\nx", "INSERTED 3"}, // delayed
		{"pause-tube jobs 60", "PAUSED"},
	} {
		line, _ := a.do(cmd.send)
		require.Equal(t, cmd.want, line)
	}
	line, _ := a2.do("list-tube-used") // a2 is a connection of A's, with no command counted
	require.Equal(t, "USING default", line)

	statsA, statsB := a.yaml("stats"), b.yaml("stats")
	for key, want := range map[string]string{ // from Redis: the same through either gateway
		"current-jobs-urgent": "1", "current-jobs-ready": "2", "current-jobs-delayed": "1",
		"current-jobs-reserved": "0", "total-jobs": "3", "current-tubes": "2",
	} {
		require.Equal(t, want, statsA[key], "A's %s", key)
		require.Equal(t, want, statsB[key], "B's %s", key)
	}
	for key, want := range map[string][2]string{ // this gateway's own: A's, B's
		"current-connections": {"2", "1"},
		"current-producers":   {"1", "0"},
		"cmd-put":             {"3", "0"},
		"cmd-pause-tube":      {"1", "0"},
		"cmd-stats":           {"1", "1"},
	} {
		require.Equal(t, want[0], statsA[key], "A's %s", key)
		require.Equal(t, want[1], statsB[key], "B's %s", key)
	}
	require.NotEqual(t, statsA["id"], statsB["id"], "each gateway has its own process id")

	tube := b.yaml("stats-tube jobs") // all about A's work, asked of B
	for key, want := range map[string]string{
		"current-jobs-urgent": "1", "current-jobs-ready": "2", "current-jobs-delayed": "1",
		"total-jobs": "3", "current-using": "1", "current-watching": "0",
		"cmd-pause-tube": "1", "pause": "60", "current-waiting": "0",
	} {
		require.Equal(t, want, tube[key], "stats-tube jobs through B: %s", key)
	}
}
