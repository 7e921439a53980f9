package main

import (
	"github.com/beangate/beangate/backend/backendtest"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const beanstalkdPath = "/usr/bin/beanstalkd"

// startBeanstalkd runs a real beanstalkd on a free loopback port for the test and returns its
// address. Without the binary the test is skipped, except in CI where it must be installed.
func startBeanstalkd(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(beanstalkdPath); err != nil {
		backendtest.Unavailable(t, "%s not installed (apt-get install beanstalkd)", beanstalkdPath)
	}
	port := freePort(t)
	cmd := exec.Command(beanstalkdPath, "-l", "127.0.0.1", "-p", strconv.Itoa(port))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "beanstalkd did not start listening on %s", addr)
	return addr
}

// freePort asks the kernel for an unused loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
