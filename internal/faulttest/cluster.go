package faulttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend/backendtest"
)

// RedisCluster is a private Redis Cluster: masters and, optionally, replicas of each, on free
// loopback ports, keeping writes in memory only, killed when the test ends.
type RedisCluster struct {
	t       testing.TB
	dir     string
	Ports   []int // the masters' ports in slot order (the first serves slot 0), then the replicas'
	masters int
	servers map[int]*process
}

// StartRedisCluster starts a cluster of the given masters, each with replicasPerMaster
// replicas, and waits until every node reports cluster_state:ok and every replica is in sync
// with its master. Without redis-server or redis-cli the test skips (fails with CI=true).
func StartRedisCluster(t testing.TB, masters, replicasPerMaster int) *RedisCluster {
	t.Helper()
	bins := map[string]string{}
	for _, name := range []string{"redis-server", "redis-cli"} {
		path, err := exec.LookPath(name)
		if err != nil {
			backendtest.Unavailable(t, "Redis Cluster unavailable: %s: %v", name, err)
			return nil
		}
		bins[name] = path
	}
	nodes := masters * (1 + replicasPerMaster)
	// Each node needs a client port and a cluster bus port (port+10000 may be taken or out of
	// range, so the bus port is given); all are held until all are found, so that they differ.
	ports := freeLoopbackPorts(t, 2*nodes)
	c := &RedisCluster{t: t, dir: t.TempDir(), Ports: ports[:nodes], masters: masters, servers: map[int]*process{}}
	for i, port := range c.Ports {
		p := startProcess(t, "redis-server", filepath.Join(c.dir, fmt.Sprintf("redis-%d.log", port)),
			bins["redis-server"], "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(ports[nodes+i]),
			"--cluster-config-file", filepath.Join(c.dir, fmt.Sprintf("nodes-%d.conf", port)),
			"--dir", c.dir, "--dbfilename", fmt.Sprintf("dump-%d.rdb", port),
			"--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction",
			"--repl-diskless-sync-delay", "0")
		if p == nil {
			return nil
		}
		c.servers[port] = p
	}
	for _, port := range c.Ports {
		if !waitFor(10*time.Second, func() bool { return c.ping(port) }) {
			c.dumpLogs()
			t.Fatalf("redis-server on %d did not answer within 10 s", port)
		}
	}
	// redis-cli makes the first addresses given the masters, in slot order, and gives each
	// the replicas from the rest.
	args := []string{"--cluster", "create"}
	for i := range c.Ports {
		args = append(args, c.Addr(i))
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bins["redis-cli"], args...).CombinedOutput(); err != nil {
		c.dumpLogs()
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if !waitFor(30*time.Second, c.ready) {
		c.dumpLogs()
		t.Fatalf("the cluster did not become ready (cluster_state:ok on every node, replicas in sync) within 30 s")
	}
	if got := c.Masters(); !slices.Equal(got, c.masterAddrs()) {
		t.Fatalf("the cluster's masters are %v, want the first %d nodes %v", got, masters, c.masterAddrs())
	}
	return c
}

// freeLoopbackPorts returns n distinct loopback ports that were free a moment ago.
func freeLoopbackPorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	lns := make([]net.Listener, n)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	return ports
}

// ready reports whether every node says cluster_state:ok and knows every other node, and
// every replica's link to its master is up.
func (c *RedisCluster) ready() bool {
	for i := range c.Ports {
		n := c.Node(i)
		info, err := n.ClusterInfo(context.Background()).Result()
		nodes, err2 := n.ClusterNodes(context.Background()).Result()
		repl, err3 := n.Info(context.Background(), "replication").Result()
		_ = n.Close()
		if err != nil || err2 != nil || err3 != nil || !strings.Contains(info, "cluster_state:ok") ||
			strings.Count(strings.TrimSpace(nodes), "\n")+1 != len(c.Ports) {
			return false
		}
		if i >= c.masters && !strings.Contains(repl, "master_link_status:up") {
			return false
		}
	}
	return true
}

func (c *RedisCluster) ping(port int) bool {
	n := goredis.NewClient(&goredis.Options{Addr: Addr(port), MaxRetries: -1, DialTimeout: time.Second, Protocol: 2})
	defer n.Close()
	return n.Ping(context.Background()).Err() == nil
}

// Addr is node i's address, 127.0.0.1:port.
func (c *RedisCluster) Addr(i int) string { return Addr(c.Ports[i]) }

// Node is a plain client of node i, to look at or disturb it; the caller closes it.
func (c *RedisCluster) Node(i int) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: c.Addr(i), MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 5 * time.Second, Protocol: 2})
}

// URL is the backend URL of the cluster as a user writes it: node 0, node 1 as a spare seed,
// and query (may be empty) appended.
func (c *RedisCluster) URL(query string) string {
	u := fmt.Sprintf("redis://%s/0?cluster=true&addr=%s", c.Addr(0), c.Addr(1%len(c.Ports)))
	if query != "" {
		u += "&" + query
	}
	return u
}

// Masters are the addresses of the masters that serve slots now, in slot order.
func (c *RedisCluster) Masters() []string {
	c.t.Helper()
	slots := c.slots()
	var masters []string
	for _, s := range slots {
		if addr := s.Nodes[0].Addr; !slices.Contains(masters, addr) {
			masters = append(masters, addr)
		}
	}
	return masters
}

func (c *RedisCluster) masterAddrs() []string {
	addrs := make([]string, c.masters)
	for i := range addrs {
		addrs[i] = c.Addr(i)
	}
	return addrs
}

func (c *RedisCluster) slots() []goredis.ClusterSlot {
	c.t.Helper()
	n := c.Node(0)
	defer n.Close()
	slots, err := n.ClusterSlots(context.Background()).Result()
	if err != nil {
		c.t.Fatalf("CLUSTER SLOTS: %v", err)
	}
	// CLUSTER SLOTS lists ranges in no promised order.
	slices.SortFunc(slots, func(a, b goredis.ClusterSlot) int { return int(a.Start - b.Start) })
	return slots
}

// MasterOf is the address of the master that serves key's slot now.
func (c *RedisCluster) MasterOf(key string) string {
	c.t.Helper()
	n := c.Node(0)
	defer n.Close()
	return c.masterOf(n, c.slots(), key)
}

func (c *RedisCluster) masterOf(n *goredis.Client, slots []goredis.ClusterSlot, key string) string {
	c.t.Helper()
	slot, err := n.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		c.t.Fatalf("CLUSTER KEYSLOT: %v", err)
	}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			return s.Nodes[0].Addr
		}
	}
	c.t.Fatalf("slot %d is served by no master", slot)
	return ""
}

// PrefixOn is a fresh namespace prefix ("bgtest-" and random hex) whose slot master addr
// serves.
func (c *RedisCluster) PrefixOn(addr string) string {
	c.t.Helper()
	n := c.Node(0)
	defer n.Close()
	slots := c.slots()
	for range 1000 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		prefix := "bgtest-" + hex.EncodeToString(b[:])
		if c.masterOf(n, slots, "{"+prefix+"}") == addr {
			return prefix
		}
	}
	c.t.Fatalf("no namespace found on master %s", addr)
	return ""
}

// Kill9 kills node i with SIGKILL.
func (c *RedisCluster) Kill9(i int) { c.servers[c.Ports[i]].kill() }

func (c *RedisCluster) dumpLogs() {
	s := &RedisSet{t: c.t, dir: c.dir}
	s.dumpLogs()
}
