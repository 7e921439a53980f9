package redis_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// gatewayProcessEnv names the namespace of a gateway process started by
// TestKilledGatewayProcessReturnsItsReservations: the test binary, run with it set, serves
// that namespace instead of running tests (see TestMain).
const gatewayProcessEnv = "BEANGATE_TEST_GATEWAY_PREFIX"

func TestMain(m *testing.M) {
	if prefix := os.Getenv(gatewayProcessEnv); prefix != "" {
		serveGatewayProcess(prefix) // until killed
	}
	os.Exit(m.Run())
}

// serveGatewayProcess serves the namespace prefix on a free port with a 1 s lease, prints the
// address on stdout, and serves until the process is killed.
func serveGatewayProcess(prefix string) {
	b, err := beanredis.New(context.Background(), beanredis.Options{
		URL: redisURL(), Prefix: prefix, LeaseTTL: time.Second, CommandTimeout: 5 * time.Second,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	_ = gateway.NewServer(gateway.Config{Backend: b, Sessions: backend.NewSessionIDs()}).Serve(ln)
	os.Exit(1)
}

// A gateway process killed with SIGKILL (no session ended, no socket closed by it) does not
// strand its reservations until their TTR (an hour here): its heartbeat lease expires and a
// surviving gateway returns them within seconds. The multi-gateway suite simulates the crash in
// one process; this one is a real kill -9 of another process.
func TestKilledGatewayProcessReturnsItsReservations(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	prefix := newPrefix(t)
	doomed := exec.Command(os.Args[0], "-test.run=^$")
	doomed.Env = append(os.Environ(), gatewayProcessEnv+"="+prefix)
	doomed.Stderr = os.Stderr
	out, err := doomed.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, doomed.Start())
	t.Cleanup(func() { _ = doomed.Process.Kill(); _ = doomed.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the gateway process did not start")

	survivor := gatewaytest.Dial(t, startGateway(t, newBackend(t, prefix, nil, time.Second)))
	worker := gatewaytest.Dial(t, strings.TrimSpace(addr))
	worker.Do("put 0 0 3600 4\r\nwork\r\n", "INSERTED 1\r\n")
	worker.Do("reserve\r\n", "RESERVED 1 4\r\nwork\r\n")
	survivor.Do("reserve-with-timeout 0\r\n", "TIMED_OUT\r\n")

	require.NoError(t, doomed.Process.Kill()) // SIGKILL
	killed := time.Now()
	survivor.Send("reserve-with-timeout 4\r\n")
	survivor.Expect("RESERVED 1 4\r\nwork\r\n") // lease 1 s + the reaper's 0.5 s period, with slack
	t.Logf("the killed gateway's reservation came back after %v", time.Since(killed))
}
