package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/internal/faulttest"
)

// Helpers of the tests of the spread layout's per-master mechanisms on a real cluster.

// spreadCluster is a cluster of three masters with a replica each.
type spreadCluster struct {
	*faulttest.RedisCluster
	prefix string // the namespace of the test's buckets
}

func startSpreadCluster(t *testing.T) *spreadCluster {
	t.Helper()
	c := faulttest.StartRedisCluster(t, 3, 1)
	return &spreadCluster{RedisCluster: c, prefix: c.PrefixOn(c.Addr(0))}
}

// backend opens a Backend on the cluster, closed when the test ends; query is added to its URL.
func (c *spreadCluster) backend(t *testing.T, query string, tweak ...func(*Options)) *Backend {
	t.Helper()
	u := c.URL("prefix=" + c.prefix)
	if query != "" {
		u += "&" + query
	}
	opts, err := ParseURL(u)
	require.NoError(t, err)
	opts.CommandTimeout = 5 * time.Second
	for _, f := range tweak {
		f(&opts)
	}
	b, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// admin is a plain client of the node at addr, closed when the test ends.
func (c *spreadCluster) admin(t *testing.T, addr string) *goredis.Client {
	t.Helper()
	for i := range c.Ports {
		if c.Addr(i) == addr {
			n := c.Node(i)
			t.Cleanup(func() { _ = n.Close() })
			return n
		}
	}
	t.Fatalf("no node at %s", addr)
	return nil
}

// bucketOn is a bucket of c.prefix whose slot master addr serves now, other than those in not.
func (c *spreadCluster) bucketOn(t *testing.T, addr string, not ...int) int {
	t.Helper()
	n := c.admin(t, addr)
	slots, err := n.ClusterSlots(context.Background()).Result()
	require.NoError(t, err)
next:
	for b := range spreadBuckets {
		for _, o := range not {
			if o == b {
				continue next
			}
		}
		slot := bucketSlot(c.prefix, b)
		for _, s := range slots {
			if s.Start <= slot && slot <= s.End && s.Nodes[0].Addr == addr {
				return b
			}
		}
	}
	t.Fatalf("no bucket of %s on %s", c.prefix, addr)
	return -1
}

// replicaOf is the index of the node that replicates the master at addr.
func (c *spreadCluster) replicaOf(t *testing.T, addr string) int {
	t.Helper()
	for i := range c.Ports {
		n := c.Node(i)
		info, err := n.Info(context.Background(), "replication").Result()
		_ = n.Close()
		if err == nil && strings.Contains(info, "role:slave") &&
			strings.Contains(info, "master_port:"+addr[strings.LastIndexByte(addr, ':')+1:]+"\r\n") {
			return i
		}
	}
	t.Fatalf("no replica of %s", addr)
	return -1
}

// nodeID is the cluster node id of the node at addr.
func (c *spreadCluster) nodeID(t *testing.T, addr string) string {
	t.Helper()
	id, err := c.admin(t, addr).Do(context.Background(), "cluster", "myid").Text()
	require.NoError(t, err)
	return id
}

// moveSlot moves slot from master src to master dst as redis-cli --cluster reshard does:
// IMPORTING on dst, MIGRATING on src, every key MIGRATEd, then the slot given to dst on both
// and the other masters. between runs once the slot is migrating and its first keys are moved
// (those of first, if any), before the rest are.
func (c *spreadCluster) moveSlot(t *testing.T, slot int, src, dst string, first []string, between func()) {
	t.Helper()
	ctx := context.Background()
	s, d := c.admin(t, src), c.admin(t, dst)
	srcID, dstID := c.nodeID(t, src), c.nodeID(t, dst)
	require.NoError(t, d.Do(ctx, "cluster", "setslot", slot, "importing", srcID).Err())
	require.NoError(t, s.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err())
	host, port, _ := strings.Cut(dst, ":")
	migrate := func(keys []string) {
		args := []any{"migrate", host, port, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		require.NoError(t, s.Do(ctx, args...).Err())
	}
	if len(first) > 0 {
		migrate(first)
	}
	if between != nil {
		between()
	}
	for {
		keys, err := s.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		require.NoError(t, err)
		if len(keys) == 0 {
			break
		}
		migrate(keys)
	}
	require.NoError(t, d.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err())
	require.NoError(t, s.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err())
	for _, m := range c.Masters() {
		if m != src && m != dst {
			require.NoError(t, c.admin(t, m).Do(ctx, "cluster", "setslot", slot, "node", dstID).Err())
		}
	}
}

// commandCalls is how many times the node at addr ran command (INFO commandstats).
func (c *spreadCluster) commandCalls(t *testing.T, addr, command string) int64 {
	t.Helper()
	return infoCount(t, c.admin(t, addr), "commandstats", "cmdstat_"+command+":calls=")
}

// infoCount is the integer after field in the INFO section, 0 if absent.
func infoCount(t *testing.T, n *goredis.Client, section, field string) int64 {
	t.Helper()
	info, err := n.Info(context.Background(), section).Result()
	require.NoError(t, err)
	_, rest, ok := strings.Cut(info, field)
	if !ok {
		return 0
	}
	end := strings.IndexAny(rest, ",\r\n")
	v, err := strconv.ParseInt(rest[:end], 10, 64)
	require.NoError(t, err)
	return v
}

// waitUntil polls cond until it holds, failing the test after d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// putCall is a put of body into tube default of bucket b, as a spread-layout batch sends it;
// keys are the keys it declares, by suffix (":stats" first: it routes the call).
func (b *Backend) putCall(ctx context.Context, bucket string, body string, suffixes ...string) slotCall {
	if len(suffixes) == 0 {
		suffixes = []string{":stats"}
	}
	keys := make([]string, len(suffixes))
	for i, s := range suffixes {
		keys[i] = bucket + s
	}
	return slotCall{key: keys[0], wait: true, cmd: fcallCmd(ctx, b.sc.fns[opPut], keys,
		bucket, "", "default", "0", "0", "60000", body, "0", "")}
}

func describe(calls []slotCall) string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%s: %v %v", c.key, c.cmd.Val(), c.cmd.Err()))
	}
	return strings.Join(out, "; ")
}

// stop stops node i (SIGSTOP) until the function returned is called (or the test ends).
func (c *spreadCluster) stop(t *testing.T, i int) func() {
	t.Helper()
	n := c.Node(i)
	pid := infoCount(t, n, "server", "process_id:")
	_ = n.Close()
	require.NoError(t, syscall.Kill(int(pid), syscall.SIGSTOP))
	var once sync.Once
	cont := func() { once.Do(func() { _ = syscall.Kill(int(pid), syscall.SIGCONT) }) }
	t.Cleanup(cont)
	return cont
}
