package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/internal/faulttest"
)

// Ports of the fault tests of this package, one block of two each (see faulttest.FreePorts).
const (
	promotionPorts    = 12550
	crashRestartPorts = 12552 // one
	leaseStarvePorts  = 12554
	netCutPort        = 12556
	slowPort          = 12557
)

// pairBackend opens a Backend on the pair through its multi-host URL, with query added.
func pairBackend(t *testing.T, pair *faulttest.PGPair, query string) *Backend {
	t.Helper()
	opts, err := ParseURL(pair.URL(query))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := New(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func pairGateways(t *testing.T, pair *faulttest.PGPair, query string) []faulttest.Gateway {
	t.Helper()
	return []faulttest.Gateway{
		faulttest.StartGateway(t, "gw1", pairBackend(t, pair, query)),
		faulttest.StartGateway(t, "gw2", pairBackend(t, pair, query)),
	}
}

// The primary of a pair with a synchronous standby crashes (stop -m immediate) under steady
// load through two gateways and the standby is promoted: both gateways find it through the
// multi-host URL (target_session_attrs=read-write) and carry on, and nothing acknowledged is
// lost, since the standby had every durable commit before it was acknowledged. A reserve is
// committed without waiting for the WAL flush, so one acknowledged in the moment before the
// crash may be forgotten: its worker's connection is closed then (durability.go), and the
// ledger finds no job handed to a second worker while the first still held it.
func TestPromotedStandbyUnderLoad(t *testing.T) {
	pair := faulttest.StartPGPair(t, promotionPorts, true)
	crashUnderLoad(t, pair, "primary crash, standby promoted", func(crashed time.Time) {
		pair.Standby.Promote()
		t.Logf("standby promoted %v after the crash", time.Since(crashed).Round(time.Millisecond))
	})
}

// The server crashes (stop -m immediate) under load and starts again in place: the gateways
// reconnect, and nothing acknowledged is lost (every durable commit was on disk); the workers
// whose reserves of the moment before the crash may be forgotten are disconnected, as above.
func TestCrashRestartInPlaceUnderLoad(t *testing.T) {
	server := faulttest.StartPG(t, crashRestartPorts)
	crashUnderLoad(t, server, "crash and restart", func(time.Time) {
		time.Sleep(500 * time.Millisecond)
		server.Primary.Start()
	})
}

// crashUnderLoad crashes the primary (stop -m immediate) under load through two gateways,
// runs recover, and checks the ledger, the recovery and that wake-ups resumed (the LISTEN
// connection moved too).
func crashUnderLoad(t *testing.T, pair *faulttest.PGPair, fault string, recover func(crashed time.Time)) {
	gws := pairGateways(t, pair, "schema=ha&lease_ttl=2s&command_timeout=3s")
	ledger := faulttest.NewLedger(3 * time.Second)
	load := &faulttest.Load{Ledger: ledger, Gateways: gws}
	load.Start()
	time.Sleep(2 * time.Second)

	crashed := time.Now()
	pair.Primary.StopImmediate()
	ledger.Fault(fault) // from when the server is gone
	recover(crashed)
	time.Sleep(3 * time.Second)
	load.Stop()
	faulttest.RequireWakeUp(t, gws[1], gws[0])
	t.Logf("drained %d jobs", load.Drain(t, gws[1], 4*time.Second))
	v := ledger.Check(t)
	require.Positive(t, v.Recovery[fault], "some gateway never recovered")
}

// While the synchronous standby is away (being rebuilt), every durable commit waits for it,
// for longer than the lease. A gateway whose worker holds reservations is alive all along,
// so no other gateway may end its sessions: its lease renewal must not wait behind commits.
func TestLeaseOutlivesStalledCommits(t *testing.T) {
	pair := faulttest.StartPGPair(t, leaseStarvePorts, true)
	gws := pairGateways(t, pair, "schema=ha&lease_ttl=1s&command_timeout=2s")
	ledger := faulttest.NewLedger(60 * time.Second) // only a dead holder explains a second delivery
	load := &faulttest.Load{Ledger: ledger, Gateways: gws}
	load.Start()
	time.Sleep(time.Second)
	holder := load.Hold(t, gws[0], 10)

	expireReservations(t, gws[0], 4)
	lapses := watchLeases(t, pair, "ha", 500*time.Millisecond) // the grace: half the lease
	pair.Standby.StopImmediate()
	ledger.Fault("synchronous standby away")
	// Clients come and go meanwhile: each session's end is a durable commit that waits too,
	// holding one of the pool's connections.
	churn := time.Now().Add(5 * time.Second) // five leases
	for time.Now().Before(churn) {
		for range 8 {
			if c, err := net.Dial("tcp", gws[0].Addr); err == nil {
				_, _ = c.Write([]byte("list-tubes\r\n"))
				time.Sleep(20 * time.Millisecond)
				_ = c.Close()
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	pair.Standby.Start()
	pair.WaitStreaming(30 * time.Second)
	time.Sleep(2 * time.Second)
	load.Stop()
	holder.DeleteAll(t, false)
	holder.Close()
	t.Logf("drained %d jobs", load.Drain(t, gws[1], 3*time.Second))
	ledger.Check(t)
	require.Empty(t, lapses(), "a live gateway's lease stayed expired for longer than the reaper's grace")
}

// expireReservations keeps n jobs of TTR 1 s on a tube of their own reserved through gw, each
// taken again as its TTR runs out, until the test ends: a steady stream of timeouts for the
// gateways to fold into the counters, a durable write of theirs.
func expireReservations(t *testing.T, gw faulttest.Gateway, n int) {
	conn, err := net.Dial("tcp", gw.Addr)
	require.NoError(t, err)
	c := beanstalk.NewConn(conn)
	tube := beanstalk.NewTube(c, "expiring")
	for range n {
		_, err := tube.Put([]byte("x"), 0, 0, time.Second)
		require.NoError(t, err)
	}
	ts := beanstalk.NewTubeSet(c, "expiring")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, _, err := ts.Reserve(time.Second); err != nil && !errors.Is(err, beanstalk.ErrTimeout) && !errors.Is(err, beanstalk.ErrDeadline) && !errors.Is(err, beanstalk.ErrInternal) {
				return // closed
			}
		}
	}()
	t.Cleanup(func() { _ = conn.Close(); <-done })
}

// watchLeases reads the schema's leases every 50 ms from the primary (reads do not wait for the
// standby) until the test ends; the function it returns lists the leases seen expired for
// longer than grace (a moment of a loaded machine is not what this looks for).
func watchLeases(t *testing.T, pair *faulttest.PGPair, schema string, grace time.Duration) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pair.Primary.Conn(ctx)
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []string
	looked := 0 // reads that worked
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var process string
			var late time.Duration
			err := conn.QueryRow(ctx, "SELECT process, now() - lease_until FROM "+schema+".processes WHERE lease_until < now() - $1::bigint * interval '1 microsecond' LIMIT 1",
				grace.Microseconds()).Scan(&process, &late)
			mu.Lock()
			switch {
			case err == nil:
				seen = append(seen, fmt.Sprintf("%s expired %v ago", process, late))
				looked++
			case errors.Is(err, pgx.ErrNoRows):
				looked++
			}
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done; _ = conn.Close(context.Background()) })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		require.Positive(t, looked, "no read of the leases worked")
		return slices.Clone(seen)
	}
}

// faultStore opens Backends on a private PostgreSQL through url(host), with a 1 s lease and a
// 2 s command timeout.
func faultStore(url func(host, query string) string) faulttest.Store {
	const query = "schema=ha&lease_ttl=1s&command_timeout=2s"
	return faulttest.Store{
		Lease: time.Second, CommandTimeout: 2 * time.Second,
		Open: func(t *testing.T, host string) backend.Backend {
			t.Helper()
			opts, err := ParseURL(url(host, query))
			require.NoError(t, err)
			b, err := New(context.Background(), opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = b.Close() })
			return b
		},
	}
}

// A silent network cut between one gateway and PostgreSQL, longer than the lease (see
// faulttest.RunNetCut).
func TestNetworkCutFromPostgres(t *testing.T) {
	server := faulttest.StartPG(t, netCutPort)
	faulttest.RunNetCut(t, faultStore(server.Primary.URL), faulttest.NewNetCut(t, netCutPort))
}

// PostgreSQL 50 ms away (a round trip): replies stay correct (see faulttest.RunSlowStore).
func TestSlowPostgres(t *testing.T) {
	faulttest.StartPG(t, slowPort)
	link := faulttest.SlowLink(t, faulttest.Addr(slowPort), 25*time.Millisecond)
	faulttest.RunSlowStore(t, faultStore(func(_, query string) string {
		return "postgres://postgres@" + link + "/postgres?sslmode=disable&" + query
	}), 25*time.Millisecond)
}
