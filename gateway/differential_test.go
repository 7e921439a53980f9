package gateway_test

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestTranscriptsAgainstRealBeanstalkd plays the same transcripts that every backend must pass
// against a real beanstalkd (Debian's 1.12): so their expected bytes are the real server's, and
// beangate is compared with it byte for byte (ids are equal since each transcript starts a
// fresh server; times are masked by the patterns; 1.12's unquoted YAML strings are allowed).
// Transcripts that mark a deliberate difference are skipped here, with their reason.
func TestTranscriptsAgainstRealBeanstalkd(t *testing.T) {
	bin := beanstalkdBinary(t)
	for _, tr := range append(gatewaytest.Transcripts(), gatewaytest.OrderTranscripts()...) {
		t.Run(tr.Name, func(t *testing.T) {
			if tr.Differs != "" {
				t.Skip("deliberate difference: " + tr.Differs)
			}
			t.Parallel()
			addr := startBeanstalkd(t, bin, tr.MaxJobSize)
			gatewaytest.Play(t, addr, tr, true)
		})
	}
}

func beanstalkdBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("beanstalkd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("beanstalkd is not installed; .ci/run installs it (apt-get install beanstalkd)")
		}
		t.Skip("beanstalkd is not installed (apt-get install beanstalkd); skipping the differential test")
	}
	return bin
}

// startBeanstalkd runs a real beanstalkd on a free loopback port until the test ends.
func startBeanstalkd(t *testing.T, bin string, maxJobSize uint32, extra ...string) string {
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
