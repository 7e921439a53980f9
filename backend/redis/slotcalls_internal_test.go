package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Calls over buckets on several masters of a cluster with replicas: each master's part goes to
// it with its own WAIT, a master that lost the library gets it again, and a call that meets
// TRYAGAIN during a slot's migration runs once the migration lets it.
func TestSlotCalls(t *testing.T) {
	c := startSpreadCluster(t)
	ctx := context.Background()
	masters := c.Masters()
	require.Len(t, masters, 3)
	var buckets [3]string // a bucket's base on each master
	for i, m := range masters {
		buckets[i] = bucketBase(c.prefix, c.bucketOn(t, m))
	}

	t.Run("library loaded again on the node that lost it", func(t *testing.T) {
		b := c.backend(t, "")
		require.NoError(t, c.admin(t, masters[1]).FunctionFlush(ctx).Err())
		calls := []slotCall{b.putCall(ctx, buckets[0], "a"), b.putCall(ctx, buckets[1], "b"), b.putCall(ctx, buckets[2], "c")}
		b.runSlotCalls(ctx, calls)
		for _, call := range calls {
			require.NoError(t, call.cmd.Err(), describe(calls))
		}
		libs, err := c.admin(t, masters[1]).FunctionList(ctx, goredis.FunctionListQuery{LibraryNamePattern: b.sc.lib}).Result()
		require.NoError(t, err)
		require.Len(t, libs, 1)
		ids, err := c.admin(t, masters[1]).Get(ctx, buckets[1]+":ids").Int()
		require.NoError(t, err)
		require.Equal(t, 1, ids, "the put ran once there")
	})

	// One WAIT per master that ran calls that wait, on that master, in the same pipeline; none
	// on the master that ran nothing.
	t.Run("one WAIT per master", func(t *testing.T) {
		b := c.backend(t, "wait_replicas=1&wait_timeout=2s")
		var before [3]int64
		for i, m := range masters {
			before[i] = c.commandCalls(t, m, "wait")
		}
		stats := slotCall{key: buckets[1] + ":stats", cmd: fcallCmd(ctx, b.sc.fns[opStats], []string{buckets[1] + ":stats"}, buckets[1], "")}
		calls := []slotCall{b.putCall(ctx, buckets[0], "a"), b.putCall(ctx, buckets[1], "b"), b.putCall(ctx, buckets[0], "c"), stats}
		werrs := b.runSlotCalls(ctx, calls)
		for i, call := range calls {
			require.NoError(t, call.cmd.Err(), describe(calls))
			require.NoError(t, werrs[i])
		}
		for i, m := range masters {
			want := before[i] + 1
			if i == 2 {
				want = before[i]
			}
			require.Equal(t, want, c.commandCalls(t, m, "wait"), "master %d", i)
		}

		// Master 0's replica stopped: the WAIT after master 0's writes finds none, that after
		// master 2's finds its replica; the read waits for nothing.
		b.opts.WaitTimeout = 200 * time.Millisecond
		stopped := c.stop(t, c.replicaOf(t, masters[0]))
		calls = []slotCall{b.putCall(ctx, buckets[0], "d"), b.putCall(ctx, buckets[2], "e"),
			{key: stats.key, cmd: fcallCmd(ctx, b.sc.fns[opStats], []string{stats.key}, buckets[1], "")}}
		werrs = b.runSlotCalls(ctx, calls)
		stopped()
		require.ErrorIs(t, werrs[0], errNotReplicated)
		require.NoError(t, werrs[1])
		require.NoError(t, werrs[2])
		for _, call := range calls {
			require.NoError(t, call.cmd.Err(), "the change is applied on the master nevertheless")
		}
	})

	// A put declaring two keys of a bucket whose slot is migrating, one of them moved already:
	// the source answers TRYAGAIN (the call did not run). It is sent again until the migration
	// ends, and then runs once, on the slot's new master.
	t.Run("TRYAGAIN during a migration", func(t *testing.T) {
		b := c.backend(t, "")
		bucket := bucketBase(c.prefix, c.bucketOn(t, masters[0], keySlotBucket(c.prefix, buckets[0])))
		first := []slotCall{b.putCall(ctx, bucket, "a")}
		b.runSlotCalls(ctx, first)
		require.NoError(t, first[0].cmd.Err())
		id := first[0].cmd.Val().(int64)
		src := c.admin(t, masters[0])
		tryAgains := func() int64 { return infoCount(t, src, "errorstats", "errorstat_TRYAGAIN:count=") }
		before := tryAgains()

		call := []slotCall{b.putCall(ctx, bucket, "b", ":stats", ":ids")}
		done := make(chan struct{})
		c.moveSlot(t, keySlot(bucket), masters[0], masters[1], []string{bucket + ":ids"}, func() {
			go func() {
				defer close(done)
				b.runSlotCalls(ctx, call)
			}()
			waitUntil(t, 5*time.Second, "TRYAGAIN answered", func() bool { return tryAgains() > before })
		})
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not end within 10 s")
		}
		require.NoError(t, call[0].cmd.Err())
		require.Equal(t, id+1, call[0].cmd.Val(), "run once, after the one before")
		ids, err := c.admin(t, masters[1]).Get(ctx, bucket+":ids").Int64()
		require.NoError(t, err)
		require.Equal(t, id+1, ids)
	})

	// A call whose reply does not come in time may have run (here: the master is busy with a
	// script, and runs the call after it): it is not sent again.
	t.Run("a call that timed out is not sent again", func(t *testing.T) {
		b := c.backend(t, "", func(o *Options) { o.CommandTimeout = 300 * time.Millisecond })
		first := []slotCall{b.putCall(ctx, buckets[2], "a")}
		b.runSlotCalls(ctx, first)
		require.NoError(t, first[0].cmd.Err())
		id := first[0].cmd.Val().(int64)
		m := c.admin(t, masters[2])
		busy := make(chan error, 1)
		go func() { busy <- m.Eval(ctx, busyScript, nil, 1500).Err() }() // answers nil
		probe := goredis.NewClient(&goredis.Options{Addr: masters[2], ReadTimeout: 50 * time.Millisecond, MaxRetries: -1, Protocol: 2})
		defer probe.Close()
		waitUntil(t, 5*time.Second, "the master busy", func() bool { return probe.Ping(ctx).Err() != nil })

		calls := []slotCall{b.putCall(ctx, buckets[2], "x")}
		b.runSlotCalls(ctx, calls)
		require.Error(t, calls[0].cmd.Err())
		require.False(t, isReply(calls[0].cmd.Err()), "%v", calls[0].cmd.Err())
		require.ErrorIs(t, <-busy, goredis.Nil)
		var n int64
		waitUntil(t, 2*time.Second, "the put applied after the script", func() bool {
			n, _ = m.Get(ctx, buckets[2]+":ids").Int64()
			return n > id
		})
		require.Equal(t, id+1, n, "applied once")
	})
}

// keySlotBucket is the bucket of prefix whose base is base.
func keySlotBucket(prefix, base string) int {
	for b := range spreadBuckets {
		if bucketBase(prefix, b) == base {
			return b
		}
	}
	return -1
}

// busyScript keeps the server busy for ARGV[1] ms.
const busyScript = `
local function now() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
local start = now()
repeat until now() - start > tonumber(ARGV[1]) * 1000
`
