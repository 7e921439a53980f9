package redis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Sharded subscriptions on a cluster of three masters with a replica each: delivered from every
// master, and made again, with onLost, when a slot moves to another master, when a master fails
// over to its replica and when a master is killed and its replica takes over.
func TestShardedWakeups(t *testing.T) {
	c := startSpreadCluster(t)
	ctx := context.Background()
	opts, err := ParseURL(c.URL("prefix=" + c.prefix))
	require.NoError(t, err)
	opts, err = opts.withDefaults()
	require.NoError(t, err)
	client, err := dial(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	messages, lost := make(chan string, 100), make(chan string, 100)
	w := newShardedWakeups(client.(*goredis.ClusterClient), 5*time.Second,
		func(ch, msg string) { messages <- ch + " " + msg },
		func(ch string) { lost <- ch })
	t.Cleanup(w.Close)

	channel := func(addr string, not ...int) string {
		return bucketBase(c.prefix, c.bucketOn(t, addr, not...)) + ":ready"
	}
	// publish sends msg on ch from the master of its slot now, and returns how many received it.
	publish := func(ch, msg string) int64 {
		n, err := c.admin(t, c.MasterOf(ch)).SPublish(ctx, ch, msg).Result()
		require.NoError(t, err)
		return n
	}
	expect := func(ch <-chan string, want string) {
		t.Helper()
		select {
		case got := <-ch:
			require.Equal(t, want, got)
		case <-time.After(20 * time.Second):
			t.Fatalf("no %q within 20 s", want)
		}
	}
	noMore := func() {
		t.Helper()
		require.Empty(t, lost, "no other channel lost")
		require.Empty(t, messages)
	}
	// moved subscribes to a channel of addr's, lets disturb move its slot elsewhere, and
	// checks it is lost once, subscribed again on its new master, and delivered from there.
	moved := func(t *testing.T, addr string, disturb func(ch string)) {
		ch := channel(addr)
		require.NoError(t, w.Subscribe(ctx, ch))
		defer w.Unsubscribe(ch)
		require.Equal(t, int64(1), publish(ch, "before"))
		expect(messages, ch+" before")
		disturb(ch)
		require.NotEqual(t, addr, c.MasterOf(ch), "the slot moved")
		expect(lost, ch)
		require.Equal(t, int64(1), publish(ch, "after"), "subscribed on the new master when onLost is called")
		expect(messages, ch+" after")
		noMore()
	}

	t.Run("delivered from every master", func(t *testing.T) {
		masters := c.Masters()
		chs := []string{channel(masters[0]), channel(masters[1]), channel(masters[2])}
		for i, ch := range chs {
			require.Equal(t, masters[i], c.MasterOf(ch))
		}
		pubs := make([]*goredis.Client, len(chs)) // connected before, to publish at once after
		for i := range chs {
			pubs[i] = c.admin(t, masters[i])
			require.NoError(t, pubs[i].Ping(ctx).Err())
		}
		require.NoError(t, w.Subscribe(ctx, chs...))
		for i, ch := range chs {
			require.Equal(t, int64(1), pubs[i].SPublish(ctx, ch, "tube").Val(), "subscribed when Subscribe returns")
		}
		for _, ch := range chs {
			expect(messages, ch+" tube")
		}
		w.mu.Lock()
		conns := len(w.conns)
		w.mu.Unlock()
		require.Equal(t, 3, conns, "one connection per master")

		// Counted: a second Subscribe and one Unsubscribe keep the channel.
		require.NoError(t, w.Subscribe(ctx, chs[0]))
		w.Unsubscribe(chs...)
		require.Equal(t, int64(1), publish(chs[0], "kept"))
		expect(messages, chs[0]+" kept")
		w.Unsubscribe(chs[0])
		waitUntil(t, 5*time.Second, "unsubscribed", func() bool { return publish(chs[0], "gone") == 0 })
		require.Equal(t, int64(0), publish(chs[1], "gone"))
		noMore()
	})

	t.Run("slot resharded", func(t *testing.T) {
		other := channel(c.Masters()[1])
		require.NoError(t, w.Subscribe(ctx, other))
		defer w.Unsubscribe(other)
		moved(t, c.Masters()[0], func(ch string) {
			c.moveSlot(t, keySlot(ch), c.Masters()[0], c.Masters()[1], nil, nil)
		})
		require.Equal(t, int64(1), publish(other, "still"), "a channel of a slot that stayed is kept")
		expect(messages, other+" still")
	})

	t.Run("CLUSTER FAILOVER", func(t *testing.T) {
		m := c.Masters()[1]
		moved(t, m, func(ch string) {
			r := c.replicaOf(t, m)
			c.failover(t, r, "")
			waitUntil(t, 20*time.Second, "the slot map updated", func() bool { return c.MasterOf(ch) == c.Addr(r) })
		})
	})

	t.Run("master killed, replica takes over", func(t *testing.T) {
		m := c.Masters()[2]
		moved(t, m, func(ch string) {
			r := c.replicaOf(t, m)
			c.Kill9(c.index(t, m))
			c.failover(t, r, "takeover")
			waitUntil(t, 20*time.Second, "the replica promoted", func() bool {
				return c.MasterOf(ch) == c.Addr(r) && c.clusterOK(t, r)
			})
		})
	})
}

// index is the index of the node at addr.
func (c *spreadCluster) index(t *testing.T, addr string) int {
	t.Helper()
	for i := range c.Ports {
		if c.Addr(i) == addr {
			return i
		}
	}
	t.Fatalf("no node at %s", addr)
	return -1
}

// clusterOK tells whether node i says cluster_state:ok.
func (c *spreadCluster) clusterOK(t *testing.T, i int) bool {
	info, err := c.admin(t, c.Addr(i)).ClusterInfo(context.Background()).Result()
	return err == nil && strings.Contains(info, "cluster_state:ok")
}

// failover makes replica i its master's master with CLUSTER FAILOVER [mode], asked again while
// it has not happened: a manual failover that the master does not take up in time (seen just
// after the cluster was made) times out, and the replica stays one.
func (c *spreadCluster) failover(t *testing.T, i int, mode string) {
	t.Helper()
	n := c.admin(t, c.Addr(i))
	args := []any{"cluster", "failover"}
	if mode != "" {
		args = append(args, mode)
	}
	for range 4 {
		require.NoError(t, n.Do(context.Background(), args...).Err())
		deadline := time.Now().Add(6 * time.Second) // the manual failover's own timeout is 5 s
		for time.Now().Before(deadline) {
			if info, err := n.Info(context.Background(), "replication").Result(); err == nil && strings.Contains(info, "role:master") {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	dir, _ := n.ConfigGet(context.Background(), "dir").Result()
	for j := range c.Ports {
		log, _ := os.ReadFile(filepath.Join(dir["dir"], fmt.Sprintf("redis-%d.log", c.Ports[j])))
		t.Logf("node %d (%s):\n%s", j, c.Addr(j), log)
	}
	t.Fatalf("node %d not promoted", i)
}
