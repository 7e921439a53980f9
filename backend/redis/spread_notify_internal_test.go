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
	publish := func(t *testing.T, ch, msg string) int64 {
		n, err := c.admin(t, c.MasterOf(ch)).SPublish(ctx, ch, msg).Result()
		require.NoError(t, err)
		return n
	}
	expect := func(t *testing.T, ch <-chan string, want string) {
		t.Helper()
		select {
		case got := <-ch:
			require.Equal(t, want, got)
		case <-time.After(20 * time.Second):
			t.Fatalf("no %q within 20 s", want)
		}
	}
	noMore := func(t *testing.T) {
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
		require.Equal(t, int64(1), publish(t, ch, "before"))
		expect(t, messages, ch+" before")
		disturb(ch)
		require.NotEqual(t, addr, c.MasterOf(ch), "the slot moved")
		expect(t, lost, ch)
		require.Equal(t, int64(1), publish(t, ch, "after"), "subscribed on the new master when onLost is called")
		expect(t, messages, ch+" after")
		noMore(t)
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
		var got []string
		for range chs {
			select {
			case m := <-messages:
				got = append(got, m)
			case <-time.After(20 * time.Second):
				t.Fatalf("only %v within 20 s", got)
			}
		}
		require.ElementsMatch(t, []string{chs[0] + " tube", chs[1] + " tube", chs[2] + " tube"}, got)
		w.mu.Lock()
		conns := len(w.conns)
		w.mu.Unlock()
		require.Equal(t, 3, conns, "one connection per master")

		// Counted: a second Subscribe and one Unsubscribe keep the channel.
		require.NoError(t, w.Subscribe(ctx, chs[0]))
		w.Unsubscribe(chs...)
		require.Equal(t, int64(1), publish(t, chs[0], "kept"))
		expect(t, messages, chs[0]+" kept")
		w.Unsubscribe(chs[0])
		// SUNSUBSCRIBE is sent, not confirmed, when Unsubscribe returns: a publish may still
		// reach it meanwhile, and is delivered.
		delivered := 0
		waitUntil(t, 5*time.Second, "unsubscribed", func() bool {
			n := 0
			for _, ch := range chs {
				n += int(publish(t, ch, "gone"))
			}
			delivered += n
			return n == 0
		})
		for range delivered {
			select {
			case m := <-messages:
				require.True(t, strings.HasSuffix(m, " gone"), m)
			case <-time.After(20 * time.Second):
				t.Fatal("a publish counted as received was not delivered")
			}
		}
		noMore(t)
	})

	t.Run("slot resharded", func(t *testing.T) {
		other := channel(c.Masters()[1])
		require.NoError(t, w.Subscribe(ctx, other))
		defer w.Unsubscribe(other)
		moved(t, c.Masters()[0], func(ch string) {
			c.moveSlot(t, keySlot(ch), c.Masters()[0], c.Masters()[1], nil, nil)
		})
		require.Equal(t, int64(1), publish(t, other, "still"), "a channel of a slot that stayed is kept")
		expect(t, messages, other+" still")
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

// failover makes replica i its master's master with CLUSTER FAILOVER [mode], once the master's
// own view of the cluster has it as its replica: a master ignores the request of a node it does
// not know as one (seen for some seconds after a cluster is made, gossip not yet through), the
// manual failover times out, and the masters then refuse to vote for a replica of that master
// for twice the node timeout. If it times out anyway, it is made with TAKEOVER, which needs no
// votes, and the test says so.
func (c *spreadCluster) failover(t *testing.T, i int, mode string) {
	t.Helper()
	n := c.admin(t, c.Addr(i))
	if mode != "takeover" { // TAKEOVER asks nothing of the master, which may be gone
		c.awaitReplicaKnown(t, i)
	}
	for _, mode := range []string{mode, "takeover"} {
		args := []any{"cluster", "failover"}
		if mode != "" {
			args = append(args, mode)
		}
		require.NoError(t, n.Do(context.Background(), args...).Err())
		deadline := time.Now().Add(6 * time.Second) // the manual failover's own timeout is 5 s
		for time.Now().Before(deadline) {
			if info, err := n.Info(context.Background(), "replication").Result(); err == nil && strings.Contains(info, "role:master") {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("CLUSTER FAILOVER %s of node %d timed out", mode, i)
	}
	dir, _ := n.ConfigGet(context.Background(), "dir").Result()
	for j := range c.Ports {
		log, _ := os.ReadFile(filepath.Join(dir["dir"], fmt.Sprintf("redis-%d.log", c.Ports[j])))
		t.Logf("node %d (%s):\n%s", j, c.Addr(j), log)
	}
	t.Fatalf("node %d not promoted", i)
}

// awaitReplicaKnown waits until the master of replica i has it as its replica in its own view
// of the cluster.
func (c *spreadCluster) awaitReplicaKnown(t *testing.T, i int) {
	t.Helper()
	id := c.nodeID(t, c.Addr(i))
	info, err := c.admin(t, c.Addr(i)).Info(context.Background(), "replication").Result()
	require.NoError(t, err)
	_, port, _ := strings.Cut(info, "master_port:")
	port, _, _ = strings.Cut(port, "\r\n")
	master := c.admin(t, "127.0.0.1:"+port)
	masterID := c.nodeID(t, "127.0.0.1:"+port)
	waitUntil(t, 30*time.Second, "the master knows its replica", func() bool {
		nodes, err := master.ClusterNodes(context.Background()).Result()
		for _, line := range strings.Split(nodes, "\n") {
			if f := strings.Fields(line); err == nil && len(f) > 3 && f[0] == id && f[3] == masterID {
				return strings.Contains(f[2], "slave")
			}
		}
		return false
	})
}
