package redis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// What a store that lost data (a Redis restart without AOF; with appendfsync everysec, the last
// second; a failover to a lagging replica) must not break: the gateways and their connections
// outlive the loss. Each test restarts a Redis of its own without persistence, which forgets
// everything, the sessions included.

// lossTimeout bounds each backend call, so that calls while Redis is down fail fast.
const lossTimeout = 500 * time.Millisecond

// serveLossGateway serves b as a gateway process of its own.
func serveLossGateway(t *testing.T, b *beanredis.Backend) string {
	t.Helper()
	addr, _ := gatewaytest.StartServer(t, b, gateway.Config{BackendTimeout: lossTimeout, Sessions: backend.NewSessionIDs()})
	return addr
}

// newLeasedBackend opens a Backend on srv with a heartbeat lease of lease (its heartbeat, which
// also restores the id floor, comes every third of it).
func newLeasedBackend(t *testing.T, srv *privateRedis, prefix string, lease time.Duration) *beanredis.Backend {
	t.Helper()
	b, err := beanredis.New(context.Background(), beanredis.Options{
		URL: srv.url(), Prefix: prefix, CommandTimeout: lossTimeout, LeaseTTL: lease,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// putUntilInserted puts body through c until Redis answers again, and returns the new id.
func putUntilInserted(t *testing.T, c *gatewaytest.Client, body string) uint64 {
	t.Helper()
	var id uint64
	require.Eventually(t, func() bool {
		reply := c.Do("put 0 0 60 "+strconv.Itoa(len(body))+"\r\n"+body+"\r\n", "{*}\r\n")
		n, ok := strings.CutPrefix(strings.TrimSpace(reply), "INSERTED ")
		if ok {
			id, _ = strconv.ParseUint(n, 10, 64)
		}
		return ok
	}, 10*time.Second, 50*time.Millisecond, "Redis never answered again")
	return id
}

// When Redis loses its data, connections that began before the loss still have their waiting
// reserves woken by a publish when a job comes, not only by the safety poll (an hour here, so
// that a reserve nobody publishes to is never woken within the test): a reserve that starts
// waiting after the loss, and one that waited across it. The store forgot their sessions, watch lists,
// the watched tubes and the counts of reserves waiting on them.
func TestWaitingReservesWokenAfterRedisLosesItsData(t *testing.T) {
	t.Parallel()
	srv := startVolatileRedis(t)
	b := srv.newBackend("loss", lossTimeout)
	beanredis.SetSafetyPoll(b, time.Hour)
	addr := serveLossGateway(t, b)
	worker, sleeper, producer := gatewaytest.Dial(t, addr), gatewaytest.Dial(t, addr), gatewaytest.Dial(t, addr)
	worker.Do("watch jobs\r\n", "WATCHING 2\r\n")
	sleeper.Do("watch other\r\n", "WATCHING 2\r\n")
	producer.Do("use jobs\r\n", "USING jobs\r\n")
	sleeper.Send("reserve-with-timeout 60\r\n")
	sleeper.ExpectNothing() // it waits, across the loss

	srv.restart()
	require.Eventually(t, func() bool {
		return producer.Do("peek 1\r\n", "{*}\r\n") == "NOT_FOUND\r\n"
	}, 10*time.Second, 50*time.Millisecond, "Redis never answered again")
	for _, body := range []string{"a", "b"} {
		worker.Send("reserve-with-timeout 60\r\n")
		worker.ExpectNothing()
		began := time.Now()
		producer.Do("put 0 0 60 1\r\n"+body+"\r\n", "INSERTED {n}\r\n")
		worker.Expect("RESERVED {n} 1\r\n" + body + "\r\n")
		t.Logf("woken %v after the put", time.Since(began))
	}
	// The sleeper tried again when the gateway had reconnected (long done by now).
	producer.Do("use other\r\n", "USING other\r\n")
	producer.Do("put 0 0 60 1\r\nz\r\n", "INSERTED {n}\r\n")
	sleeper.Expect("RESERVED {n} 1\r\nz\r\n")

	// The store knows the sessions again: the tubes count them, as beanstalkd would. (Only as
	// far as their commands since told it: it does not know yet that the worker and the sleeper
	// use default, nor that the producer watches it.)
	observer := dialWire(t, addr)
	for _, tt := range []struct{ tube, using, watching, reserved string }{
		{"jobs", "0", "1", "2"},
		{"other", "1", "1", "1"},
	} {
		st := observer.yaml("stats-tube " + tt.tube)
		require.Equal(t, tt.using, st["current-using"], "current-using of %s", tt.tube)
		require.Equal(t, tt.watching, st["current-watching"], "current-watching of %s", tt.tube)
		require.Equal(t, tt.reserved, st["current-jobs-reserved"], "current-jobs-reserved of %s", tt.tube)
	}
}

// A session the store forgot is registered again by the reserve that takes a job, so that when
// its gateway dies (its Backend closes first, as a kill -9 looks to the others), the survivors'
// reaper still returns the job, long before its TTR of an hour.
func TestForgottenSessionsReservationReturnsWhenItsGatewayDies(t *testing.T) {
	t.Parallel()
	srv := startVolatileRedis(t)
	doomedBackend := newLeasedBackend(t, srv, "reap", time.Second)
	doomedAddr, doomedServer := gatewaytest.StartServer(t, doomedBackend,
		gateway.Config{BackendTimeout: lossTimeout, Sessions: backend.NewSessionIDs()})
	worker := gatewaytest.Dial(t, doomedAddr)
	worker.Do("list-tube-used\r\n", "USING default\r\n") // its session has begun
	survivor := gatewaytest.Dial(t, serveLossGateway(t, newLeasedBackend(t, srv, "reap", time.Second)))

	srv.restart()
	id := putUntilInserted(t, survivor, "work")
	worker.Do("reserve-with-timeout 0\r\n", "RESERVED "+strconv.FormatUint(id, 10)+" 4\r\nwork\r\n")
	survivor.Do("reserve-with-timeout 0\r\n", "TIMED_OUT\r\n")

	require.NoError(t, doomedBackend.Close())
	require.NoError(t, doomedServer.Close())
	survivor.Send("reserve-with-timeout 4\r\n") // lease 1 s + grace and reaper period, with slack
	survivor.Expect("RESERVED " + strconv.FormatUint(id, 10) + " 4\r\nwork\r\n")
}

// Job ids never start again at 1 after Redis loses its data, so that a client still
// holding an old id cannot delete or touch a new, unrelated job with it. That holds for a put
// through the gateway that handed the old ids out, and for one through a gateway that never saw
// them while another one, which only reserved them, lives.
func TestJobIDsNeverGoBackAfterRedisLosesItsData(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		// putter returns the connection that puts after the loss, given the gateway that
		// handed the old ids out; wait for that gateway to have reconnected first.
		putter func(t *testing.T, srv *privateRedis, seen string) *gatewaytest.Client
	}{
		{"through the gateway that handed them out", func(t *testing.T, _ *privateRedis, seen string) *gatewaytest.Client {
			return gatewaytest.Dial(t, seen)
		}},
		{"through a new gateway, while the one that reserved them lives", func(t *testing.T, srv *privateRedis, _ string) *gatewaytest.Client {
			admin := srv.client()
			defer admin.Close()
			// The gateway that handed the ids out raises the store's id sequence as soon as it
			// has reconnected (not at its next heartbeat, 20 s away); a put through another
			// one before that could still reuse them.
			require.Eventually(t, func() bool {
				n, err := admin.Get(context.Background(), "{ids}:ids").Uint64()
				return err == nil && n >= 3
			}, 5*time.Second, 20*time.Millisecond, "the gateway that saw ids up to 3 did not raise the sequence")
			return gatewaytest.Dial(t, serveLossGateway(t, srv.newBackend("ids", lossTimeout)))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startVolatileRedis(t)
			// The jobs are put by a gateway that is gone before the loss; the clients got their
			// ids from the gateway they reserve through.
			gone := srv.newBackend("ids", lossTimeout)
			for range 3 {
				_, err := gone.Put(context.Background(), backend.PutParams{Tube: "default", TTR: time.Hour, Body: []byte("old")})
				require.NoError(t, err)
			}
			require.NoError(t, gone.Close())
			seen := serveLossGateway(t, newLeasedBackend(t, srv, "ids", time.Minute))
			holder := gatewaytest.Dial(t, seen)
			for id := range 3 {
				holder.Do("reserve-with-timeout 0\r\n", "RESERVED "+strconv.Itoa(id+1)+" 3\r\nold\r\n")
			}

			srv.restart()
			putter := tt.putter(t, srv, seen)
			first := putUntilInserted(t, putter, "new")
			require.Greater(t, first, uint64(3), "an id handed out before the loss was given again")
			for range 3 {
				putter.Do("put 0 0 60 3\r\nnew\r\n", "INSERTED {n}\r\n")
			}
			for id := range 3 {
				n := strconv.Itoa(id + 1)
				holder.Do("touch "+n+"\r\n", "NOT_FOUND\r\n")
				holder.Do("delete "+n+"\r\n", "NOT_FOUND\r\n")
			}
			holder.Do("reserve-with-timeout 0\r\n", "RESERVED "+strconv.FormatUint(first, 10)+" 3\r\nnew\r\n")
		})
	}
}
