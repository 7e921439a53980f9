package deploy

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const composeFile = "compose/compose.yaml"

// composeService holds the keys compose.yaml uses; decoded strictly, a misspelt one fails.
type composeService struct {
	Image           string            `json:"image"`
	Command         []string          `json:"command"`
	Environment     map[string]string `json:"environment"`
	Ports           []string          `json:"ports"`
	Volumes         []string          `json:"volumes"`
	DependsOn       []string          `json:"depends_on"`
	Restart         string            `json:"restart"`
	StopGracePeriod string            `json:"stop_grace_period"`
	Healthcheck     *struct {
		Test     []string `json:"test"`
		Interval string   `json:"interval"`
		Timeout  string   `json:"timeout"`
		Retries  int      `json:"retries"`
	} `json:"healthcheck"`
}

func composeServices(t *testing.T) map[string]composeService {
	t.Helper()
	raw, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, yaml.Unmarshal(raw, &top)) // resolves the x-gateway anchor and its merges
	for key := range top {
		require.True(t, key == "services" || key == "volumes" || strings.HasPrefix(key, "x-"), "top-level key %q", key)
	}
	var services map[string]composeService
	require.NoError(t, yaml.UnmarshalStrict(top["services"], &services))
	return services
}

// docker-compose (or docker compose) validates the file as Compose itself reads it.
func TestComposeFileValidates(t *testing.T) {
	t.Parallel()
	var cmd *exec.Cmd
	if _, err := exec.LookPath("docker-compose"); err == nil {
		cmd = exec.Command("docker-compose", "-f", composeFile, "config", "-q")
	} else if exec.Command("docker", "compose", "version").Run() == nil {
		cmd = exec.Command("docker", "compose", "-f", composeFile, "config", "-q")
	} else {
		if os.Getenv("CI") == "true" {
			t.Fatal("neither docker-compose nor docker compose: .ci/image-test installs docker-compose")
		}
		t.Skip("neither docker-compose nor docker compose")
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// What compose.yaml says agrees with the files and servers it names: each gateway's options
// load as the server loads them, its ports and grace period fit them, its store is a service of
// the file, every mounted file exists, and Prometheus scrapes every gateway.
func TestComposeGateways(t *testing.T) {
	services := composeServices(t)
	var gateways []string
	for name, svc := range services {
		for _, v := range svc.Volumes {
			source, _, ok := strings.Cut(v, ":")
			require.True(t, ok, "%s: volume %q", name, v)
			if strings.HasPrefix(source, ".") {
				_, err := os.Stat(filepath.Join("compose", source))
				require.NoError(t, err, "%s mounts %s", name, source)
			}
		}
		for _, dep := range svc.DependsOn {
			require.Contains(t, services, dep, "%s depends on %s", name, dep)
		}
		if svc.Image != "beangate:dev" {
			continue
		}
		gateways = append(gateways, name)
		cfg := serverConfig(t, svc.Command, svc.Environment, nil)
		require.True(t, unspecifiedHost(cfg.Listen), "%s: -l %s, unreachable from the host", name, cfg.Listen)
		require.Len(t, svc.Ports, 1, name)
		parts := strings.Split(svc.Ports[0], ":")
		require.Len(t, parts, 3, "%s: published as HOST_IP:HOST_PORT:CONTAINER_PORT", name)
		require.Equal(t, "127.0.0.1", parts[0], "%s: published on the host's loopback", name)
		require.Equal(t, strconv.Itoa(cfg.Port), parts[2], name)
		metricsHost, metricsPort, err := net.SplitHostPort(cfg.Metrics.HTTP)
		require.NoError(t, err, name)
		require.True(t, unspecifiedHost(metricsHost), "%s: Prometheus scrapes the metrics listener over the network", name)
		require.Equal(t, "9110", metricsPort, name)
		grace, err := time.ParseDuration(svc.StopGracePeriod)
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, grace, cfg.ShutdownDelay+cfg.ShutdownTimeout+5*time.Second, "%s: stop_grace_period", name)
		store, err := url.Parse(cfg.Backend)
		require.NoError(t, err)
		require.Contains(t, services, store.Hostname(), "%s: its store is a service", name)
		require.Contains(t, svc.DependsOn, store.Hostname(), name)
		if store.Scheme == "redis" {
			cmd := strings.Join(services[store.Hostname()].Command, " ")
			require.Contains(t, cmd, "--appendonly yes")
			require.Contains(t, cmd, "--maxmemory-policy noeviction")
		}
	}
	slices.Sort(gateways)
	require.Equal(t, []string{"gateway-postgres", "gateway-redis-1", "gateway-redis-2"}, gateways)

	var prom struct {
		RuleFiles     []string `json:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string          `json:"targets"`
				Labels  map[string]string `json:"labels"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	raw, err := os.ReadFile("compose/prometheus.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, &prom))
	var targets []string
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			require.NotEmpty(t, st.Labels["queue"], "the alerts and the dashboard group by queue")
			targets = append(targets, st.Targets...)
		}
	}
	var want []string
	for _, g := range gateways {
		want = append(want, g+":9110")
	}
	require.ElementsMatch(t, want, targets, "Prometheus scrapes every gateway")
	require.Contains(t, services["prometheus"].Volumes, "../../configs/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro")
	require.Equal(t, []string{"alerts.yml"}, prom.RuleFiles)
	require.Contains(t, services["grafana"].Volumes,
		"../../configs/grafana/beangate-dashboard.json:/var/lib/grafana/dashboards/beangate-dashboard.json:ro")
	dashboards, err := os.ReadFile("compose/grafana/dashboards.yml")
	require.NoError(t, err)
	require.Contains(t, string(dashboards), "path: /var/lib/grafana/dashboards\n")
	datasources, err := os.ReadFile("compose/grafana/datasources.yml")
	require.NoError(t, err)
	require.Contains(t, string(datasources), "url: http://prometheus:9090\n")
}

// promtool reads the Compose Prometheus configuration with the alert rules where Prometheus
// finds them, mounted beside it.
func TestComposePrometheusConfig(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("promtool"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no promtool: .ci/run installs it")
		}
		t.Skip("no promtool")
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{"compose/prometheus.yml": "prometheus.yml", "../configs/prometheus/alerts.yml": "alerts.yml"} {
		raw, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, dst), raw, 0o600))
	}
	out, err := exec.Command("promtool", "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "SUCCESS: 1 rule files found")
}
