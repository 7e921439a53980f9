package ops_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

var metricName = regexp.MustCompile(`\bbeangate_[a-z_]+`)

// The alert rules and the dashboard in configs/ name only metrics that /metrics serves (promtool
// checks their syntax in .ci/run, not the names): a memory store with a binlog serves them all.
func TestDeployExamplesNameRealMetrics(t *testing.T) {
	t.Parallel()
	s := startBinlogServer(t, t.TempDir())
	c := gatewaytest.Dial(t, s.addr)
	c.Do("put 0 0 60 1\r\nx\r\n", "INSERTED 1\r\n")
	c.Do("reserve\r\n", "RESERVED 1 1\r\nx\r\n")
	c.Do("delete 1\r\n", "DELETED\r\n")
	families := scrape(t, s.http)

	dashboard, err := os.ReadFile("../../configs/grafana/beangate-dashboard.json")
	require.NoError(t, err)
	var parsed map[string]any
	require.NoError(t, json.Unmarshal(dashboard, &parsed), "the dashboard is JSON")
	rules, err := os.ReadFile("../../configs/prometheus/alerts.yml")
	require.NoError(t, err)

	for file, text := range map[string]string{"dashboard": string(dashboard), "alerts.yml": string(rules)} {
		names := metricName.FindAllString(text, -1)
		require.NotEmpty(t, names)
		for _, name := range names {
			if strings.HasSuffix(name, "_") {
				continue // prose: "beangate_store_*"
			}
			family := strings.TrimSuffix(name, "_bucket")
			require.Contains(t, families, family, "%s names %s, which /metrics does not serve", file, name)
		}
	}
}
