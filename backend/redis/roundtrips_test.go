package redis_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	beanredis "github.com/beangate/beangate/backend/redis"
)

// roundTrips counts a client's round trips to Redis: each command sent alone, and each
// pipeline.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (r *roundTrips) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// newCountedBackend opens a Backend on a fresh namespace whose client counts its round trips.
// Its lease is a minute, so that no heartbeat or reaper call falls within the test.
func newCountedBackend(t *testing.T) (*beanredis.Backend, *roundTrips) {
	t.Helper()
	requireRedis(t)
	opts, err := goredis.ParseURL(redisURL())
	require.NoError(t, err)
	opts.Protocol, opts.MaxRetries = 2, -1 // as New sets them for a client of its own
	client := goredis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	rt := &roundTrips{}
	client.AddHook(rt)
	b, err := beanredis.New(context.Background(), beanredis.Options{
		Client: client, Prefix: newPrefix(t), LeaseTTL: time.Minute, CommandTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b, rt
}

// Every protocol command costs at most one Redis round trip (one that waits for a job takes
// one per try, and the connection's first command one more, to begin its session).
func TestAtMostOneRoundTripPerCommand(t *testing.T) {
	t.Parallel()
	b, rt := newCountedBackend(t)
	c := dialWire(t, startGateway(t, b))
	line, _ := c.do("use default") // begins the session
	require.Equal(t, "USING default", line)

	for _, tt := range []struct{ send, want string }{
		{"put 0 0 60 1\r\nx", "INSERTED 1"},
		{"put 0 3600 60 1\r\nx", "INSERTED 2"},
		{"peek 1", "FOUND 1 1"},
		{"peek-ready", "FOUND 1 1"},
		{"peek-delayed", "FOUND 2 1"},
		{"reserve", "RESERVED 1 1"},
		{"touch 1", "TOUCHED"},
		{"release 1 0 0", "RELEASED"},
		{"reserve-with-timeout 5", "RESERVED 1 1"},
		{"bury 1 0", "BURIED"},
		{"peek-buried", "FOUND 1 1"},
		{"kick 1", "KICKED 1"},
		{"reserve-job 1", "RESERVED 1 1"},
		{"stats-job 1", "OK"},
		{"delete 1", "DELETED"},
		{"kick-job 2", "KICKED"},
		{"stats-tube default", "OK"},
		{"stats", "OK"},
		{"list-tubes", "OK"},
		{"list-tube-used", "USING default"},
		{"list-tubes-watched", "OK"},
		{"watch other", "WATCHING 2"},
		{"ignore other", "WATCHING 1"},
		{"use other", "USING other"},
		{"pause-tube default 0", "PAUSED"},
		{"reserve-with-timeout 0", "RESERVED 2 1"},
		{"delete 2", "DELETED"},
		{"reserve-with-timeout 0", "TIMED_OUT"},
	} {
		before := rt.n.Load()
		line, _ := c.do(tt.send)
		require.Regexp(t, "^"+tt.want+"( |$)", line, tt.send)
		require.LessOrEqual(t, rt.n.Load()-before, int64(1), "round trips of %q", tt.send)
	}
}

// Commands of many connections that arrive while a batch is out go to Redis together, as one
// call. The batch's leader is held back for a while (SetBeforeSend) so that every put is queued
// by the time it sends, whatever the scheduling. The hook is set before any call and switched
// on with an atomic: the batcher reads it unlocked.
func TestCommandsOfManyConnectionsShareRoundTrips(t *testing.T) {
	t.Parallel()
	b, rt := newCountedBackend(t)
	var hold atomic.Bool
	beanredis.SetBeforeSend(b, func() {
		if hold.Load() {
			time.Sleep(100 * time.Millisecond)
		}
	})
	addr := startGateway(t, b)
	const conns = 16
	cs := make([]*wireConn, conns)
	for i := range cs {
		cs[i] = dialWire(t, addr)
		line, _ := cs[i].do("use default") // each session begun beforehand
		require.Equal(t, "USING default", line)
	}
	hold.Store(true)

	before := rt.n.Load()
	var wg sync.WaitGroup
	lines := make([]string, conns)
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.nc.Write([]byte("put 0 0 60 1\r\nx\r\n")) // do's require must not run here
			lines[i], _ = c.r.ReadString('\n')
		}()
	}
	wg.Wait()
	trips := rt.n.Load() - before
	for i, l := range lines {
		require.Regexp(t, `^INSERTED \d+\r\n$`, l, "connection %d", i)
	}
	require.LessOrEqual(t, trips, int64(3), fmt.Sprintf("%d puts from %d connections", conns, conns))
	t.Logf("%d puts from %d connections: %d round trips", conns, conns, trips)
}
