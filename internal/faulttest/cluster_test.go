package faulttest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/internal/faulttest"
)

// The cluster is what its doc says: the first nodes are the masters in slot order, each replica
// follows one of them, and PrefixOn finds namespaces on the master asked for.
func TestStartRedisCluster(t *testing.T) {
	tests := []struct {
		name              string
		masters, replicas int
	}{
		{"three masters", 3, 0},
		{"three masters with a replica each", 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := faulttest.StartRedisCluster(t, tt.masters, tt.replicas)
			require.Len(t, c.Ports, tt.masters*(1+tt.replicas))
			masters := c.Masters()
			require.Len(t, masters, tt.masters)
			for i, addr := range masters {
				require.Equal(t, c.Addr(i), addr)
				require.Equal(t, addr, c.MasterOf("{"+c.PrefixOn(addr)+"}"))
			}
			for i := tt.masters; i < len(c.Ports); i++ {
				n := c.Node(i)
				info, err := n.Info(context.Background(), "replication").Result()
				_ = n.Close()
				require.NoError(t, err)
				require.Contains(t, info, "role:slave")
				require.Contains(t, info, "master_link_status:up")
			}
			require.Contains(t, c.URL("prefix=p"), "cluster=true")
		})
	}
}

// Without redis-server the fixture skips a test, and fails it with CI=true: a CI machine that
// lost Redis must not pass the cluster tests by skipping them.
func TestStartRedisClusterWithoutRedisFailsInCI(t *testing.T) {
	if os.Getenv("FAULTTEST_CLUSTER_CHILD") == "1" {
		faulttest.StartRedisCluster(t, 3, 0)
		return
	}
	tests := []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"true", true, "CI=true, so this fails"},
		{"", false, "skipping (CI=true makes this fail)"},
	}
	for _, tt := range tests {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestStartRedisClusterWithoutRedisFailsInCI$", "-test.v")
			cmd.Env = []string{"PATH=" + t.TempDir(), "FAULTTEST_CLUSTER_CHILD=1", "CI=" + tt.ci}
			out, err := cmd.CombinedOutput()
			if tt.wantFail {
				require.Error(t, err, "%s", out)
			} else {
				require.NoError(t, err, "%s", out)
			}
			require.True(t, strings.Contains(string(out), tt.want), "%s", out)
		})
	}
}
