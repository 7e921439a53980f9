package gatewaytest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"

	"github.com/stretchr/testify/require"
)

// DebianBeanstalkd is the beanstalkd on PATH (Debian's 1.12, which .ci/run installs). Without it
// the test fails when CI=true and is skipped elsewhere.
func DebianBeanstalkd(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("beanstalkd")
	if err != nil {
		backendtest.Unavailable(t, "beanstalkd is not installed (apt-get install beanstalkd; .ci/run installs it)")
	}
	return bin
}

// ReferenceBeanstalkd is the real beanstalkd 1.13 when it is at hand — the binary named by
// $BEANGATE_REFERENCE_BEANSTALKD, else a beanstalkd 1.13 build beside the repository, if present
// (shared/reference/beanstalkd-1.13 in the repository's parent directory) — and Debian's 1.12
// otherwise. It also says which.
func ReferenceBeanstalkd(t testing.TB) (bin, version string) {
	t.Helper()
	if p := os.Getenv("BEANGATE_REFERENCE_BEANSTALKD"); p != "" {
		return p, "1.13"
	}
	if root, ok := repoRoot(); ok {
		p := filepath.Join(root, "..", "shared", "reference", "beanstalkd-1.13")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, "1.13"
		}
	}
	return DebianBeanstalkd(t), "1.12"
}

// repoRoot is the nearest directory above the working directory holding go.mod.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// StartBeanstalkd runs a real beanstalkd on a free loopback port until the test ends and returns
// its address. maxJobSize 0 keeps its default -z.
func StartBeanstalkd(t testing.TB, bin string, maxJobSize uint32, extra ...string) string {
	t.Helper()
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		require.NoError(t, ln.Close())
		args := append([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port)}, extra...)
		if maxJobSize > 0 {
			args = append(args, "-z", strconv.FormatUint(uint64(maxJobSize), 10))
		}
		cmd := exec.Command(bin, args...)
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if waitListening(addr, exited) {
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
			return addr
		}
		_ = cmd.Process.Kill()
		<-exited
		require.Less(t, attempt, 3, "beanstalkd did not start")
	}
}

func waitListening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}
