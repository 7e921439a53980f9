package gatewaytest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
)

// reclaimWithin bounds how long a dead gateway's reservations may stay stranded: the backend's
// heartbeat lease (set short by the caller) plus its reaper's period, with slack.
const reclaimWithin = 10 * time.Second

// RunMultiGateway is the suite for shared-store backends: several gateway.Servers in this test
// process, each over its own Backend, all on one store namespace, driven with the raw protocol
// over TCP.
//
// Every call of newGateway must return a new Backend instance (as a separate gateway process
// would have) on the SAME namespace, and register its own cleanup; Close may then be called
// twice (the suite closes a backend itself to simulate a crash). The backend's gateway lease
// should be short (a second or two), since one case waits for a dead gateway's jobs to return.
// Cases run in parallel, each in its own tubes.
func RunMultiGateway(t *testing.T, newGateway func(t *testing.T) backend.Backend) {
	cases := []struct {
		name string
		run  func(t *testing.T, start func() *testGateway)
	}{
		{"PutOnOneGatewayIsReservedOnAnother", putOnOneReserveOnAnother},
		{"BlockedReserveIsWokenByAPutOnAnotherGateway", blockedReserveWokenAcrossGateways},
		{"AnotherGatewayCannotTouchAReservation", otherGatewayCannotTouchReservation},
		{"AbruptlyStoppedGatewayReturnsItsReservations", abruptlyStoppedGatewayReturnsJobs},
		{"IDsAreUniqueUnderConcurrentPutsOnAllGateways", idsUniqueAcrossGateways},
		{"EveryJobIsDeliveredExactlyOnceAcrossGateways", exactlyOnceAcrossGateways},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, func() *testGateway { return startGateway(t, newGateway(t)) })
		})
	}
}

// testGateway is one gateway "process": a Server with its own SessionIDs over its own Backend.
type testGateway struct {
	t    *testing.T
	addr string
	srv  *gateway.Server
	b    backend.Backend
}

func startGateway(t *testing.T, b backend.Backend) *testGateway {
	addr, srv := StartServer(t, b, gateway.Config{Sessions: backend.NewSessionIDs()})
	return &testGateway{t: t, addr: addr, srv: srv, b: b}
}

// crash stops the gateway as a kill -9 would look to the others: its heartbeats stop first
// (the Backend closes, so nothing more reaches the store), then its sockets close.
func (g *testGateway) crash() {
	require.NoError(g.t, g.b.Close())
	require.NoError(g.t, g.srv.Close())
}

// dial opens a connection that uses and watches only tube.
func (g *testGateway) dial(tube string) *Client {
	c := Dial(g.t, g.addr)
	c.Do("use "+tube+"\r\n", "USING "+tube+"\r\n")
	c.Do("watch "+tube+"\r\n", "WATCHING 2\r\n")
	c.Do("ignore default\r\n", "WATCHING 1\r\n")
	return c
}

// tubeFor names a case's own tube, so that parallel cases sharing a namespace do not meet.
func tubeFor(t *testing.T) string {
	name := t.Name()
	name = name[strings.LastIndexByte(name, '/')+1:]
	return fmt.Sprintf("mg-%s-%d", name[:min(len(name), 40)], time.Now().UnixNano()%1e6)
}

// idOf reads the id of an "INSERTED <id>\r\n" or "RESERVED <id> ..." reply.
func idOf(t testing.TB, reply string) string {
	f := strings.Fields(reply)
	require.GreaterOrEqual(t, len(f), 2, "reply %q", reply)
	return f[1]
}

func putOnOneReserveOnAnother(t *testing.T, start func() *testGateway) {
	tube := tubeFor(t)
	a, b := start().dial(tube), start().dial(tube)
	id := idOf(t, a.Do("put 0 0 60 5\r\nhello\r\n", "INSERTED {n}\r\n"))
	b.Do("reserve-with-timeout 0\r\n", "RESERVED "+id+" 5\r\nhello\r\n")
	a.Do("stats-job "+id+"\r\n", "OK {n}\r\n---\nid: "+id+"\ntube: {*}\nstate: reserved\n"+
		"pri: 0\nage: {n}\ndelay: 0\nttr: 60\ntime-left: {n}\nfile: 0\nreserves: 1\ntimeouts: 0\n"+
		"releases: 0\nburies: 0\nkicks: 0\n\r\n")
}

func blockedReserveWokenAcrossGateways(t *testing.T, start func() *testGateway) {
	tube := tubeFor(t)
	a, b := start().dial(tube), start().dial(tube)
	b.Send("reserve-with-timeout 60\r\n")
	b.ExpectNothing() // it is waiting
	began := time.Now()
	id := idOf(t, a.Do("put 0 0 60 2\r\nhi\r\n", "INSERTED {n}\r\n"))
	b.Expect("RESERVED " + id + " 2\r\nhi\r\n") // within ReplyTimeout, long before the 60 s
	t.Logf("cross-gateway wake-up took %v", time.Since(began))
}

func otherGatewayCannotTouchReservation(t *testing.T, start func() *testGateway) {
	tube := tubeFor(t)
	a, b := start().dial(tube), start().dial(tube)
	id := idOf(t, a.Do("put 0 0 60 1\r\nx\r\n", "INSERTED {n}\r\n"))
	b.Do("reserve-with-timeout 0\r\n", "RESERVED "+id+" 1\r\nx\r\n")
	a.Do("delete "+id+"\r\n", "NOT_FOUND\r\n")
	a.Do("release "+id+" 0 0\r\n", "NOT_FOUND\r\n")
	a.Do("bury "+id+" 0\r\n", "NOT_FOUND\r\n")
	a.Do("touch "+id+"\r\n", "NOT_FOUND\r\n")
	a.Do("reserve-job "+id+"\r\n", "NOT_FOUND\r\n")
	b.Do("delete "+id+"\r\n", "DELETED\r\n")
}

func abruptlyStoppedGatewayReturnsJobs(t *testing.T, start func() *testGateway) {
	tube := tubeFor(t)
	survivor, doomed := start(), start()
	a, c := survivor.dial(tube), doomed.dial(tube)
	id := idOf(t, c.Do("put 0 0 3600 4\r\nwork\r\n", "INSERTED {n}\r\n"))
	c.Do("reserve-with-timeout 0\r\n", "RESERVED "+id+" 4\r\nwork\r\n")
	a.Do("reserve-with-timeout 0\r\n", "TIMED_OUT\r\n")

	doomed.crash()
	began := time.Now()
	a.Send(fmt.Sprintf("reserve-with-timeout %d\r\n", int(reclaimWithin.Seconds())))
	got, err := a.expect(Pattern("{*}\r\n", false))
	require.NoError(t, err)
	require.Equal(t, "RESERVED "+id+" 4\r\n", got, "the dead gateway's job did not come back within %v", reclaimWithin)
	a.Expect("work\r\n")
	t.Logf("dead gateway's reservation returned after %v", time.Since(began))
	a.Do("stats-job "+id+"\r\n", "OK {n}\r\n---\nid: "+id+"\ntube: {*}\nstate: reserved\n"+
		"pri: 0\nage: {n}\ndelay: 0\nttr: 3600\ntime-left: {n}\nfile: 0\nreserves: 2\ntimeouts: 0\n"+
		"releases: 0\nburies: 0\nkicks: 0\n\r\n")
}

// rawConn is a protocol connection usable from any goroutine: it returns errors instead of
// failing the test.
type rawConn struct {
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(addr, tube string) (*rawConn, error) {
	nc, err := net.DialTimeout("tcp", addr, ReplyTimeout)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{nc: nc, r: bufio.NewReader(nc)}
	for _, cmd := range []string{"use " + tube, "watch " + tube, "ignore default"} {
		if _, err := rc.do(cmd); err != nil {
			_ = nc.Close()
			return nil, err
		}
	}
	return rc, nil
}

// do sends one command line and returns the reply line (without CRLF); a body is read and
// dropped.
func (rc *rawConn) do(line string) (string, error) {
	_ = rc.nc.SetDeadline(time.Now().Add(2 * reclaimWithin))
	if _, err := rc.nc.Write([]byte(line + "\r\n")); err != nil {
		return "", err
	}
	reply, _, err := ReadReply(rc.r)
	return reply, err
}

// ReadReply reads one reply of any kind: its line and, for a reply that carries a body (OK,
// RESERVED, FOUND), the body, both without their CRLFs.
func ReadReply(r *bufio.Reader) (line, body string, err error) {
	if line, err = r.ReadString('\n'); err != nil {
		return "", "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	f := strings.Fields(line)
	if len(f) < 2 || (f[0] != "OK" && f[0] != "RESERVED" && f[0] != "FOUND") {
		return line, "", nil
	}
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return "", "", fmt.Errorf("reply %q: %w", line, err)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", "", err
	}
	return line, string(b[:n]), nil
}

// onEveryGateway runs work on each connections per gateway at once, each connection using and
// watching tube, and returns the first error any of them met.
func onEveryGateway(gws []*testGateway, each int, tube string, work func(rc *rawConn) error) error {
	var (
		wg   sync.WaitGroup
		errs = make(chan error, len(gws)*each)
	)
	for _, g := range gws {
		for range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rc, err := dialRaw(g.addr, tube)
				if err != nil {
					errs <- err
					return
				}
				defer rc.nc.Close()
				if err := work(rc); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

func idsUniqueAcrossGateways(t *testing.T, start func() *testGateway) {
	const gateways, connsEach, putsEach = 3, 4, 50
	tube := tubeFor(t)
	gws := make([]*testGateway, gateways)
	for i := range gws {
		gws[i] = start()
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	err := onEveryGateway(gws, connsEach, tube, func(rc *rawConn) error {
		for range putsEach {
			reply, err := rc.do("put 0 0 60 1\r\nx")
			if err != nil || !strings.HasPrefix(reply, "INSERTED ") {
				return fmt.Errorf("put: %q, %v", reply, err)
			}
			mu.Lock()
			seen[reply[len("INSERTED "):]]++
			mu.Unlock()
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, seen, gateways*connsEach*putsEach, "some id was handed out twice")
}

func exactlyOnceAcrossGateways(t *testing.T, start func() *testGateway) {
	const gateways, workersEach, jobs = 3, 3, 150
	tube := tubeFor(t)
	gws := make([]*testGateway, gateways)
	for i := range gws {
		gws[i] = start()
	}
	producer := gws[0].dial(tube)
	put := map[string]bool{}
	for i := range jobs {
		put[idOf(t, producer.Do(fmt.Sprintf("put %d 0 60 1\r\nx\r\n", i%5), "INSERTED {n}\r\n"))] = true
	}
	var (
		mu  sync.Mutex
		got = map[string]int{}
	)
	err := onEveryGateway(gws, workersEach, tube, func(rc *rawConn) error {
		for {
			reply, err := rc.do("reserve-with-timeout 1")
			if err != nil {
				return err
			}
			if reply == "TIMED_OUT" {
				return nil
			}
			f := strings.Fields(reply)
			if len(f) != 3 || f[0] != "RESERVED" {
				return fmt.Errorf("reserve: %q", reply)
			}
			mu.Lock()
			got[f[1]]++
			mu.Unlock()
			if reply, err := rc.do("delete " + f[1]); err != nil || reply != "DELETED" {
				return fmt.Errorf("delete %s: %q, %v", f[1], reply, err)
			}
		}
	})
	require.NoError(t, err)
	require.Len(t, got, jobs, "every job must be delivered")
	for id, n := range got {
		require.True(t, put[id], "job %s was never put", id)
		require.Equal(t, 1, n, "job %s delivered %d times", id, n)
	}
}
