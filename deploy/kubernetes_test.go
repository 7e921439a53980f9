package deploy

import (
	"bytes"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// manifests are the objects of deploy/kubernetes, by kind.
type manifests struct {
	deployments  []appsv1.Deployment
	statefulSets []appsv1.StatefulSet
	services     []corev1.Service
	configMaps   map[string]corev1.ConfigMap
	secrets      map[string]corev1.Secret
	budgets      []policyv1.PodDisruptionBudget
}

// decodeManifests reads every document of every file strictly: an unknown or misspelt field
// fails, as do a kind or apiVersion this test does not know.
func decodeManifests(t *testing.T, files []string) manifests {
	t.Helper()
	m := manifests{configMaps: map[string]corev1.ConfigMap{}, secrets: map[string]corev1.Secret{}}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			var meta metav1.TypeMeta
			require.NoError(t, yaml.Unmarshal([]byte(doc), &meta))
			where := file + " document " + strconv.Itoa(i+1) + " (" + meta.Kind + ")"
			switch meta.APIVersion + " " + meta.Kind {
			case "apps/v1 Deployment":
				m.deployments = append(m.deployments, decodeStrict[appsv1.Deployment](t, doc, where))
			case "apps/v1 StatefulSet":
				m.statefulSets = append(m.statefulSets, decodeStrict[appsv1.StatefulSet](t, doc, where))
			case "v1 Service":
				m.services = append(m.services, decodeStrict[corev1.Service](t, doc, where))
			case "v1 ConfigMap":
				c := decodeStrict[corev1.ConfigMap](t, doc, where)
				m.configMaps[c.Name] = c
			case "v1 Secret":
				s := decodeStrict[corev1.Secret](t, doc, where)
				m.secrets[s.Name] = s
			case "policy/v1 PodDisruptionBudget":
				m.budgets = append(m.budgets, decodeStrict[policyv1.PodDisruptionBudget](t, doc, where))
			default:
				t.Fatalf("%s: unexpected apiVersion and kind %q", where, meta.APIVersion+" "+meta.Kind)
			}
		}
	}
	return m
}

func decodeStrict[T any](t *testing.T, doc, where string) T {
	t.Helper()
	var v T
	require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &v), where)
	return v
}

func stripComments(doc string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")
}

// workload is a pod template with what owns it.
type workload struct {
	name     string
	replicas int32
	selector *metav1.LabelSelector
	pod      corev1.PodTemplateSpec
	claims   []corev1.PersistentVolumeClaim
}

func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob("kubernetes/*.yaml")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"kubernetes/gateways.yaml", "kubernetes/memory.yaml"}, files)
	m := decodeManifests(t, files)
	require.Len(t, m.deployments, 1, "the gateways")
	require.Len(t, m.statefulSets, 1, "the memory store's single node")
	require.Len(t, m.budgets, 1)

	var workloads []workload
	for _, d := range m.deployments {
		require.NotNil(t, d.Spec.Replicas)
		workloads = append(workloads, workload{d.Name, *d.Spec.Replicas, d.Spec.Selector, d.Spec.Template, nil})
		require.NotNil(t, d.Spec.Strategy.RollingUpdate)
		require.Zero(t, d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue(), "a rollout starts a new gateway before stopping one")
	}
	for _, s := range m.statefulSets {
		require.NotNil(t, s.Spec.Replicas)
		workloads = append(workloads, workload{s.Name, *s.Spec.Replicas, s.Spec.Selector, s.Spec.Template, s.Spec.VolumeClaimTemplates})
	}

	for _, w := range workloads {
		t.Run(w.name, func(t *testing.T) {
			checkWorkload(t, m, w)
		})
	}

	t.Run("Services", func(t *testing.T) {
		for _, svc := range m.services {
			w := selected(t, workloads, svc.Spec.Selector)
			c := w.pod.Spec.Containers[0]
			for _, p := range svc.Spec.Ports {
				require.Equal(t, intstr.String, p.TargetPort.Type, "%s: target ports by name", svc.Name)
				cp := containerPort(t, c, p.TargetPort)
				require.Equal(t, p.Port, cp.ContainerPort, "%s: port %s keeps the container's number", svc.Name, p.Name)
			}
		}
		for _, w := range workloads {
			found := false
			for _, svc := range m.services {
				found = found || matches(svc.Spec.Selector, w.pod.Labels)
			}
			require.True(t, found, "no Service selects %s", w.name)
		}
	})

	// A StatefulSet names its governing Service, which must exist and be headless: it gives the
	// pods their stable DNS names, and Kubernetes does not create it.
	t.Run("StatefulSetServices", func(t *testing.T) {
		for _, s := range m.statefulSets {
			require.NotEmpty(t, s.Spec.ServiceName, "%s names its governing Service", s.Name)
			var governing *corev1.Service
			for i, svc := range m.services {
				if svc.Name == s.Spec.ServiceName {
					governing = &m.services[i]
				}
			}
			require.NotNil(t, governing, "%s: no Service %s", s.Name, s.Spec.ServiceName)
			require.Equal(t, corev1.ClusterIPNone, governing.Spec.ClusterIP, "%s: Service %s is headless", s.Name, governing.Name)
			require.True(t, matches(governing.Spec.Selector, s.Spec.Template.Labels), "%s: Service %s selects its pods", s.Name, governing.Name)
		}
	})

	t.Run("PodDisruptionBudget", func(t *testing.T) {
		pdb := m.budgets[0]
		w := selected(t, workloads, pdb.Spec.Selector.MatchLabels)
		require.Equal(t, "Deployment", kindOf(m, w.name), "a budget for the gateways; one memory node cannot have one")
		require.NotNil(t, pdb.Spec.MaxUnavailable)
		require.Equal(t, 1, pdb.Spec.MaxUnavailable.IntValue())
		require.Greater(t, w.replicas, int32(1), "a budget of one unavailable needs more than one gateway")
	})
}

func kindOf(m manifests, name string) string {
	for _, d := range m.deployments {
		if d.Name == name {
			return "Deployment"
		}
	}
	return "StatefulSet"
}

// selected is the one workload whose pods the selector picks.
func selected(t *testing.T, workloads []workload, selector map[string]string) workload {
	t.Helper()
	var found []workload
	for _, w := range workloads {
		if matches(selector, w.pod.Labels) {
			found = append(found, w)
		}
	}
	require.Len(t, found, 1, "selector %v must pick exactly one workload's pods", selector)
	return found[0]
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func checkWorkload(t *testing.T, m manifests, w workload) {
	require.NotNil(t, w.selector)
	require.Empty(t, w.selector.MatchExpressions)
	require.True(t, matches(w.selector.MatchLabels, w.pod.Labels), "the selector picks the template's pods")
	spec := w.pod.Spec
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	cfg := serverConfig(t, c.Args, containerEnv(t, m, c), mountedFiles(t, m, spec, c))

	// Reachable through the Service: the beanstalk listener on every interface, at the port the
	// container declares.
	require.True(t, unspecifiedHost(cfg.Listen), "listen %q: the pod's address is not loopback", cfg.Listen)
	require.Equal(t, int32(cfg.Port), containerPort(t, c, intstr.FromString("beanstalk")).ContainerPort)

	// The probes reach a listener that serves them on every interface; the console stays on
	// loopback or off.
	require.NotEmpty(t, cfg.Metrics.HTTP, "the probes use the metrics listener")
	host, port, err := net.SplitHostPort(cfg.Metrics.HTTP)
	require.NoError(t, err)
	require.True(t, unspecifiedHost(host), "--metrics-http %s: the kubelet probes the pod's address", cfg.Metrics.HTTP)
	if cfg.HTTP != "" {
		consoleHost, _, err := net.SplitHostPort(cfg.HTTP)
		require.NoError(t, err)
		require.True(t, net.ParseIP(consoleHost).IsLoopback(), "--http %s: the console stays on loopback", cfg.HTTP)
	}
	metricsPort := containerPort(t, c, intstr.FromString("metrics"))
	require.Equal(t, port, strconv.Itoa(int(metricsPort.ContainerPort)))
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		paths []string
	}{
		{"readiness", c.ReadinessProbe, []string{"/readyz"}},
		{"liveness", c.LivenessProbe, []string{"/healthz"}},
		{"startup", c.StartupProbe, []string{"/healthz", "/readyz"}},
	} {
		require.NotNil(t, p.probe, "%s probe", p.name)
		require.NotNil(t, p.probe.HTTPGet, "%s probe over HTTP", p.name)
		require.Contains(t, p.paths, p.probe.HTTPGet.Path, "%s probe path", p.name)
		require.Equal(t, metricsPort.ContainerPort, containerPort(t, c, p.probe.HTTPGet.Port).ContainerPort, "%s probe port", p.name)
		period, timeout := orDefault(p.probe.PeriodSeconds, 10), orDefault(p.probe.TimeoutSeconds, 1)
		require.Less(t, timeout, period, "%s probe: a timeout shorter than its period", p.name)
	}
	require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	// A liveness failure restarts the container: never for a store outage (/readyz's business).
	require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	startup := time.Duration(orDefault(c.StartupProbe.PeriodSeconds, 10)*orDefault(c.StartupProbe.FailureThreshold, 3)) * time.Second
	require.GreaterOrEqual(t, startup, 30*time.Second, "the startup probe's window")

	// The grace period covers a preStop hook, --shutdown-delay and --shutdown-timeout, with room
	// for the process to exit before SIGKILL.
	require.NotNil(t, spec.TerminationGracePeriodSeconds)
	grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	var preStop time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		require.NotNil(t, c.Lifecycle.PreStop.Sleep, "the image has no shell: only a sleep preStop can run")
		preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	require.GreaterOrEqual(t, grace, preStop+cfg.ShutdownDelay+cfg.ShutdownTimeout+5*time.Second,
		"terminationGracePeriodSeconds %s < preStop %s + --shutdown-delay %s + --shutdown-timeout %s + 5s",
		grace, preStop, cfg.ShutdownDelay, cfg.ShutdownTimeout)

	// Not root, nothing to escalate to, the image's user.
	psc := spec.SecurityContext
	require.NotNil(t, psc)
	require.True(t, *psc.RunAsNonRoot)
	require.Equal(t, imageUser(t), *psc.RunAsUser)
	require.NotNil(t, psc.SeccompProfile)
	require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	csc := c.SecurityContext
	require.NotNil(t, csc)
	require.False(t, *csc.AllowPrivilegeEscalation)
	require.True(t, *csc.ReadOnlyRootFilesystem)
	require.Equal(t, []corev1.Capability{"ALL"}, csc.Capabilities.Drop)

	require.False(t, c.Resources.Requests.Cpu().IsZero(), "a CPU request")
	require.False(t, c.Resources.Requests.Memory().IsZero(), "a memory request")
	require.False(t, c.Resources.Limits.Memory().IsZero(), "a memory limit")

	// The store decides the shape: the memory store is one process, with its binlog on a claim
	// the pod's group can write; a shared store allows any number of gateways.
	if strings.HasPrefix(cfg.Backend, "memory:") {
		require.Equal(t, int32(1), w.replicas, "one memory store, one process")
		require.NotEmpty(t, cfg.Binlog.Dir, "-b: the jobs outlive the pod")
		claim := mountOf(t, c, cfg.Binlog.Dir)
		found := false
		for _, pvc := range w.claims {
			found = found || pvc.Name == claim.Name
		}
		require.True(t, found, "-b %s is on a volume claim", cfg.Binlog.Dir)
		require.False(t, claim.ReadOnly)
		require.NotNil(t, psc.FSGroup)
		require.Equal(t, *psc.RunAsGroup, *psc.FSGroup, "the claim is writable by the pod's group")
	} else {
		require.Empty(t, cfg.Binlog.Dir)
		require.Greater(t, w.replicas, int32(1), "gateways on a shared store, more than one")
		require.NotEmpty(t, cfg.Auth.TokenFile, "gateways reachable in the cluster ask for a token")
		secretFile(t, m, spec, c, cfg.Auth.TokenFile)
	}
}

func orDefault(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}

func unspecifiedHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

func containerPort(t *testing.T, c corev1.Container, ref intstr.IntOrString) corev1.ContainerPort {
	t.Helper()
	for _, p := range c.Ports {
		if (ref.Type == intstr.String && p.Name == ref.StrVal) || (ref.Type == intstr.Int && p.ContainerPort == ref.IntVal) {
			return p
		}
	}
	t.Fatalf("container %s has no port %s", c.Name, ref.String())
	return corev1.ContainerPort{}
}

// containerEnv resolves the container's environment, values from Secrets included.
func containerEnv(t *testing.T, m manifests, c corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s, ok := m.secrets[ref.Name]
			require.True(t, ok, "env %s: no Secret %s", e.Name, ref.Name)
			v, ok := s.StringData[ref.Key]
			require.True(t, ok, "env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key)
			env[e.Name] = v
		default:
			t.Fatalf("env %s: unexpected source", e.Name)
		}
	}
	return env
}

// mountOf is the volume mount that holds path.
func mountOf(t *testing.T, c corev1.Container, file string) corev1.VolumeMount {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if file == vm.MountPath || strings.HasPrefix(file, vm.MountPath+"/") {
			return vm
		}
	}
	t.Fatalf("%s is on no volume mount", file)
	return corev1.VolumeMount{}
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s", name)
	return corev1.Volume{}
}

// mountedFiles are the files of ConfigMap volumes the container sees, by path.
func mountedFiles(t *testing.T, m manifests, spec corev1.PodSpec, c corev1.Container) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, vm := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != vm.Name || v.ConfigMap == nil {
				continue
			}
			cm, ok := m.configMaps[v.ConfigMap.Name]
			require.True(t, ok, "volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
			require.Empty(t, v.ConfigMap.Items)
			if vm.SubPath != "" {
				data, ok := cm.Data[vm.SubPath]
				require.True(t, ok, "ConfigMap %s has no key %s", cm.Name, vm.SubPath)
				files[vm.MountPath] = data
				continue
			}
			for key, data := range cm.Data {
				files[path.Join(vm.MountPath, key)] = data
			}
		}
	}
	return files
}

// secretFile checks that file is a key of a Secret mounted in the container.
func secretFile(t *testing.T, m manifests, spec corev1.PodSpec, c corev1.Container, file string) {
	t.Helper()
	vm := mountOf(t, c, file)
	v := volume(t, spec, vm.Name)
	require.NotNil(t, v.Secret, "%s is on volume %s, not a Secret", file, vm.Name)
	s, ok := m.secrets[v.Secret.SecretName]
	require.True(t, ok, "no Secret %s", v.Secret.SecretName)
	rel := strings.TrimPrefix(strings.TrimPrefix(file, vm.MountPath), "/")
	key := rel
	if len(v.Secret.Items) > 0 {
		key = ""
		for _, item := range v.Secret.Items {
			if item.Path == rel {
				key = item.Key
			}
		}
	}
	require.Contains(t, s.StringData, key, "%s: Secret %s has no such key", file, s.Name)
	require.NotEmpty(t, bytes.TrimSpace([]byte(s.StringData[key])))
}

// imageUser is the uid the Dockerfile's USER names.
func imageUser(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^USER (\d+)(:\d+)?$`).FindStringSubmatch(string(raw))
	require.NotNil(t, m, "the Dockerfile names its user by number")
	uid, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	return uid
}
