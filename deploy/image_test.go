package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The image tests run the image `make image` built, named by BEANGATE_TEST_IMAGE (.ci/image-test
// builds it and sets it), from the outside: containers on the host's network serve on loopback
// ports of their own, and the test speaks to them as any client would. Unset, they skip, except
// with CI=true: CI must build and test the image.
func testImage(t *testing.T) string {
	t.Helper()
	image := builtBy(t, "BEANGATE_TEST_IMAGE", "make image")
	_, err := exec.LookPath("docker")
	require.NoError(t, err, "BEANGATE_TEST_IMAGE is set but there is no docker command")
	docker(t, "image", "inspect", image)
	return image
}

// builtBy is the environment variable name, which .ci/image-test sets after running the make
// target that builds what the test checks. Unset, the test skips, except with CI=true: CI must
// build and check it.
func builtBy(t *testing.T, name, target string) string {
	t.Helper()
	value := os.Getenv(name)
	if value == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run these tests with .ci/image-test, which runs %s", name, target)
		}
		t.Skipf("%s is not set: .ci/image-test runs %s and these tests", name, target)
	}
	return value
}

// docker runs the docker command and returns its standard output, failing the test on an error.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := dockerErr(args...)
	require.NoError(t, err, "docker %s", strings.Join(args, " "))
	return out
}

func dockerErr(args ...string) (string, error) {
	cmd := exec.Command("docker", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return string(out), nil
}

var containers atomic.Int64

// uniqueName names a container or volume of this test run.
func uniqueName(t *testing.T) string {
	return fmt.Sprintf("beangate-test-%d-%d", os.Getpid(), containers.Add(1))
}

// runContainer starts the image detached with the docker run options opts and the beangate
// options args; it is removed when the test ends.
func runContainer(t *testing.T, name string, opts []string, args ...string) {
	t.Helper()
	t.Cleanup(func() { _, _ = dockerErr("rm", "-f", "-v", name) })
	run := append([]string{"run", "-d", "--name", name}, opts...)
	run = append(run, testImage(t))
	docker(t, append(run, args...)...)
}

func inspect(t *testing.T, name, format string) string {
	t.Helper()
	return strings.TrimSpace(docker(t, "inspect", "-f", format, name))
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// gateway is a container on the host's network, serving on loopback ports of its own.
type gateway struct {
	name          string
	port, metrics int
}

func (g gateway) addr() string { return "127.0.0.1:" + strconv.Itoa(g.port) }

// startGateway runs a container that serves the beanstalk protocol and /readyz on free loopback
// ports, with the options args, and waits until /readyz answers 200.
func startGateway(t *testing.T, name string, opts []string, args ...string) gateway {
	t.Helper()
	g := gateway{name: name, port: freeLoopbackPort(t), metrics: freeLoopbackPort(t)}
	args = append([]string{"-p", strconv.Itoa(g.port), "--metrics-http", "127.0.0.1:" + strconv.Itoa(g.metrics)}, args...)
	runContainer(t, name, append([]string{"--network", "host"}, opts...), args...)
	g.requireReadyz(t, http.StatusOK)
	return g
}

func (g gateway) requireReadyz(t *testing.T, want int) {
	t.Helper()
	client := http.Client{Timeout: 2 * time.Second}
	got, body := 0, ""
	require.Eventually(t, func() bool {
		resp, err := client.Get("http://127.0.0.1:" + strconv.Itoa(g.metrics) + "/readyz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.Status)
		got, body = resp.StatusCode, b.String()
		return got == want
	}, 30*time.Second, 50*time.Millisecond, "/readyz of %s: want %d, last %d %s; logs:\n%s", g.name, want, got, body, logs(t, g.name))
}

func logs(t *testing.T, name string) string {
	out, _ := exec.Command("docker", "logs", name).CombinedOutput()
	return string(out)
}

// stop stops the container as an orchestrator does (SIGTERM, then SIGKILL after grace) and
// returns how long it took; the process must have exited 0 on its own.
func (g gateway) stop(t *testing.T, grace time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	docker(t, "stop", "-t", strconv.Itoa(int(grace.Seconds())), g.name)
	took := time.Since(start)
	require.Less(t, took, grace, "docker stop took the whole grace period: SIGKILL; logs:\n%s", logs(t, g.name))
	require.Equal(t, "0 false", inspect(t, g.name, "{{.State.ExitCode}} {{.State.OOMKilled}}"), "logs:\n%s", logs(t, g.name))
	require.Contains(t, logs(t, g.name), "msg=stopped")
	return took
}

func dialBeanstalk(t *testing.T, addr string) *beanstalk.Conn {
	t.Helper()
	c, err := beanstalk.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestImageSaysWhatItIs(t *testing.T) {
	t.Parallel()
	image := testImage(t)
	out := docker(t, "run", "--rm", "--network", "none", image, "-v")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, out)
	m := regexp.MustCompile(`^beangate (v\S+) \(beanstalkd 1\.13 protocol\)$`).FindStringSubmatch(lines[0])
	require.NotNil(t, m, "a version, not (devel): %q", lines[0])
	m2 := regexp.MustCompile(`^commit ([0-9a-f]{40}(-dirty)?), commit date (\S+), go\S+ linux/\w+$`).FindStringSubmatch(lines[1])
	require.NotNil(t, m2, lines[1])
	_, err := time.Parse(time.RFC3339, m2[3])
	require.NoError(t, err, "the commit date")
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		require.Equal(t, strings.TrimSpace(string(head)), strings.TrimSuffix(m2[1], "-dirty"), "built from this checkout")
	}
	require.Equal(t, m2[1], inspect(t, image, `{{index .Config.Labels "org.opencontainers.image.revision"}}`))
	require.Equal(t, m[1], inspect(t, image, `{{index .Config.Labels "org.opencontainers.image.version"}}`))
}

// With no options: loopback only, as the binary; as uid 65532 without capabilities; and
// healthy, the health check finding the default metrics listener without a shell.
func TestImageDefaults(t *testing.T) {
	t.Parallel()
	name := uniqueName(t)
	runContainer(t, name, []string{"--network", "none", "--health-interval", "1s"})
	require.Equal(t, `["CMD","/beangate","healthcheck"]`, inspect(t, name, "{{json .Config.Healthcheck.Test}}"))
	require.Eventually(t, func() bool {
		return inspect(t, name, "{{.State.Health.Status}}") == "healthy"
	}, 30*time.Second, 200*time.Millisecond, "health: %s\nlogs:\n%s", inspect(t, name, "{{json .State.Health}}"), logs(t, name))
	require.Contains(t, docker(t, "exec", name, "/beangate", "ctl", "stats"), "current-connections: ")

	pid := inspect(t, name, "{{.State.Pid}}")
	status, err := os.ReadFile("/proc/" + pid + "/status")
	require.NoError(t, err)
	for _, want := range []string{"Uid:\t65532\t65532\t65532\t65532", "Gid:\t65532\t65532\t65532\t65532", "CapEff:\t0000000000000000"} {
		require.Contains(t, string(status), want)
	}
	require.Equal(t, "65532:65532", inspect(t, name, "{{.Config.User}}"))
	// The container's sockets: the beanstalk port listens on 127.0.0.1 alone.
	tcp, err := os.ReadFile("/proc/" + pid + "/net/tcp")
	require.NoError(t, err)
	var listening []string
	for _, line := range strings.Split(string(tcp), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 3 && f[3] == "0A" { // TCP_LISTEN
			listening = append(listening, f[1])
		}
	}
	require.ElementsMatch(t, []string{"0100007F:2C24", "0100007F:2396"}, listening, "127.0.0.1:11300 and 127.0.0.1:9110 only")
}

// -b /data on a named volume: the jobs outlive the container. docker stop is a graceful stop,
// within the grace period, exit 0.
func TestImageKeepsJobsOnAVolume(t *testing.T) {
	t.Parallel()
	testImage(t)
	volume := uniqueName(t)
	docker(t, "volume", "create", volume)
	t.Cleanup(func() { _, _ = dockerErr("volume", "rm", "-f", volume) })
	mount := []string{"-v", volume + ":/data"}

	first := startGateway(t, uniqueName(t), mount, "-b", "/data", "--shutdown-delay", "1s")
	c := dialBeanstalk(t, first.addr())
	done, err := c.Put([]byte("done"), 10, 0, time.Minute)
	require.NoError(t, err)
	id, body, err := c.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, done, id)
	require.Equal(t, "done", string(body))
	require.NoError(t, c.Delete(id))
	kept, err := c.Put([]byte("kept"), 10, 0, time.Minute)
	require.NoError(t, err)
	held, err := c.Put([]byte("held"), 5, 0, time.Minute)
	require.NoError(t, err)
	id, _, err = c.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, held, id)

	took := first.stop(t, 20*time.Second)
	require.GreaterOrEqual(t, took, time.Second, "--shutdown-delay is served first")
	_, err = c.Stats()
	require.Error(t, err, "the holder's connection is closed")

	second := startGateway(t, uniqueName(t), mount, "-b", "/data")
	c = dialBeanstalk(t, second.addr())
	stats, err := c.Stats()
	require.NoError(t, err)
	require.Equal(t, "2", stats["current-jobs-ready"], "both jobs back, the held one ready")
	require.Equal(t, "0", stats["current-jobs-reserved"])
	for _, want := range []struct {
		id   uint64
		body string
	}{{held, "held"}, {kept, "kept"}} {
		id, body, err := c.Reserve(5 * time.Second)
		require.NoError(t, err)
		require.Equal(t, want.id, id)
		require.Equal(t, want.body, string(body))
		require.NoError(t, c.Delete(id))
	}
	second.stop(t, 20*time.Second)
}

// docker stop of a gateway on a shared store returns its reservations at once: another gateway
// hands the job out again without waiting for its TTR.
func TestImageStopReturnsReservations(t *testing.T) {
	t.Parallel()
	testImage(t)
	const redisAddr = "127.0.0.1:6379"
	rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s: %v", redisAddr, err)
		}
		t.Skipf("no Redis at %s: %v", redisAddr, err)
	}
	prefix := uniqueName(t)
	t.Cleanup(func() { deleteRedisKeys(t, rdb, "{"+prefix+"}*") })
	backend := []string{"--backend", "redis://" + redisAddr + "/0?prefix=" + prefix}

	a := startGateway(t, uniqueName(t), nil, backend...)
	b := startGateway(t, uniqueName(t), nil, backend...)
	worker := dialBeanstalk(t, a.addr())
	id, err := worker.Put([]byte("job"), 0, 0, 10*time.Minute)
	require.NoError(t, err)
	got, _, err := worker.Reserve(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)

	other := dialBeanstalk(t, b.addr())
	stats, err := other.StatsJob(id)
	require.NoError(t, err)
	require.Equal(t, "reserved", stats["state"])
	a.stop(t, 20*time.Second)
	stats, err = other.StatsJob(id)
	require.NoError(t, err)
	require.Equal(t, "ready", stats["state"], "returned by the graceful stop, not by the TTR")
	got, _, err = other.Reserve(time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.NoError(t, other.Delete(id))
}

func deleteRedisKeys(t *testing.T, rdb *goredis.Client, pattern string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		_ = rdb.Del(ctx, iter.Val()).Err()
	}
	if err := iter.Err(); err != nil {
		t.Logf("cleaning Redis keys %s: %v", pattern, err)
	}
}
