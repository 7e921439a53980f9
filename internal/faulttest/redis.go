package faulttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend/backendtest"
)

// MasterName is the name the sentinels of a RedisSet monitor the master by.
const MasterName = "beangate-ha"

// RedisSet is a private Redis master, its replicas and three sentinels (quorum 2), on
// consecutive loopback ports: master, replicas, sentinels.
type RedisSet struct {
	t         testing.TB
	dir       string
	bin       string
	Ports     []int // master, replicas, sentinel 1..3 as started
	replicas  int
	servers   map[int]*process
	sentinels []*process
}

// StartRedisSet starts a set of one master and one replica on the ports base..base+4 (see
// StartRedisSetOf).
func StartRedisSet(t testing.TB, base int) *RedisSet {
	t.Helper()
	return StartRedisSetOf(t, base, 1)
}

// StartRedisSetOf starts a set of one master and the given number of replicas on the ports from
// base on (replicas+4 of them), and waits until the sentinels know the master, its replicas and
// each other, so that a failover can happen. Sentinels take a master for down after 1 s without
// a reply.
func StartRedisSetOf(t testing.TB, base, replicas int) *RedisSet {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		backendtest.Unavailable(t, "redis-server: %v", err)
		return nil
	}
	s := &RedisSet{t: t, dir: t.TempDir(), bin: bin, Ports: FreePorts(t, base, replicas+4), replicas: replicas, servers: map[int]*process{}}
	s.StartServer(s.Ports[0], 0)
	for _, port := range s.Ports[1 : 1+replicas] {
		s.StartServer(port, s.Ports[0])
	}
	for i, port := range s.sentinelPorts() {
		conf := filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.conf", i))
		text := strings.Join([]string{
			"port " + strconv.Itoa(port),
			"bind 127.0.0.1",
			"dir " + s.dir,
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2", MasterName, s.Ports[0]),
			"sentinel down-after-milliseconds " + MasterName + " 1000",
			"sentinel failover-timeout " + MasterName + " 4000",
			"sentinel parallel-syncs " + MasterName + " 1",
		}, "\n") + "\n"
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s.sentinels = append(s.sentinels, startProcess(t, "redis-sentinel", filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.log", i)), bin, conf, "--sentinel"))
	}
	ok := waitFor(30*time.Second, func() bool {
		for _, port := range s.sentinelPorts() {
			c := s.client(port)
			peers, err := c.Do(context.Background(), "sentinel", "sentinels", MasterName).Slice()
			known, err2 := c.Do(context.Background(), "sentinel", "replicas", MasterName).Slice()
			_ = c.Close()
			if err != nil || err2 != nil || len(peers) < 2 || len(known) < replicas {
				return false
			}
		}
		for _, port := range s.Ports[1 : 1+replicas] {
			if !s.replicaInSync(port) {
				return false
			}
		}
		return s.onlineReplicas(s.Ports[0]) == replicas
	})
	if !ok {
		s.dumpLogs()
		t.Fatal("the sentinels did not find the master, its replicas and each other within 30 s")
	}
	return s
}

// sentinelPorts are the ports of the set's sentinels.
func (s *RedisSet) sentinelPorts() []int { return s.Ports[1+s.replicas:] }

// StartRedis starts a lone private redis-server (no replica, no sentinels) on port, listening on
// 127.0.0.1 and CutHost.
func StartRedis(t testing.TB, port int) *RedisSet {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		backendtest.Unavailable(t, "redis-server: %v", err)
		return nil
	}
	s := &RedisSet{t: t, dir: t.TempDir(), bin: bin, Ports: FreePorts(t, port, 1), servers: map[int]*process{}}
	s.StartServer(port, 0)
	return s
}

// StartRedisPair starts a private master on base and its replica on base+1 (no sentinels), and
// waits until the replica is in sync.
func StartRedisPair(t testing.TB, base int) *RedisSet {
	t.Helper()
	s := StartRedis(t, base)
	if s == nil {
		return nil
	}
	s.Ports, s.replicas = append(s.Ports, FreePorts(t, base+1, 1)...), 1
	s.StartServer(base+1, base)
	if !waitFor(30*time.Second, func() bool { return s.replicaInSync(base+1) && s.onlineReplicas(base) == 1 }) {
		s.dumpLogs()
		t.Fatal("the replica did not sync with its master within 30 s")
	}
	return s
}

// StartServer starts a redis-server on port (listening on 127.0.0.1 and CutHost), a replica of
// replicaOf unless that is 0. Writes are kept in memory only: what survives a master's death
// is what its replica has.
func (s *RedisSet) StartServer(port, replicaOf int) {
	s.t.Helper()
	args := []string{s.bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1 " + CutHost, "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--dbfilename", fmt.Sprintf("dump-%d.rdb", port), "--maxmemory-policy", "noeviction",
		"--repl-diskless-sync-delay", "0"} // a replica syncs at once, not after 5 s
	if replicaOf != 0 {
		args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(replicaOf))
	}
	p := startProcess(s.t, "redis-server", filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", port)), args...)
	s.servers[port] = p
	if !waitFor(10*time.Second, func() bool {
		c := s.client(port)
		defer c.Close()
		return c.Ping(context.Background()).Err() == nil
	}) {
		s.dumpLogs()
		s.t.Fatalf("redis-server on %d did not answer within 10 s", port)
	}
}

func (s *RedisSet) client(port int) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: Addr(port), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, Protocol: 2})
}

// replicaInSync reports whether the server on port is a replica whose link to its master is up.
func (s *RedisSet) replicaInSync(port int) bool {
	c := s.client(port)
	defer c.Close()
	info, err := c.Info(context.Background(), "replication").Result()
	return err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up")
}

// onlineReplicas is how many replicas acknowledge a write to the master on port within 100 ms:
// those a WAIT counts. A replica's own link is up before that: after a full sync its master
// streams it writes only once it has acknowledged the snapshot, up to a second later.
func (s *RedisSet) onlineReplicas(port int) int {
	c := s.client(port)
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "faulttest:replicated", 1, 0).Err(); err != nil {
		return 0
	}
	n, err := c.Wait(ctx, 10, 100*time.Millisecond).Result()
	if err != nil {
		return 0
	}
	return int(n)
}

// WaitOnlineReplicas waits until n replicas acknowledge writes to the master on port (see
// onlineReplicas).
func (s *RedisSet) WaitOnlineReplicas(port, n int, within time.Duration) {
	s.t.Helper()
	if !waitFor(within, func() bool { return s.onlineReplicas(port) >= n }) {
		s.dumpLogs()
		s.t.Fatalf("the master on %d did not have %d replicas online within %v", port, n, within)
	}
}

// URL is the backend URL of the set through its sentinels, with the given extra query.
func (s *RedisSet) URL(query string) string {
	sp := s.sentinelPorts()
	u := fmt.Sprintf("redis://%s/0?master_name=%s&addr=%s&addr=%s", Addr(sp[0]), MasterName, Addr(sp[1]), Addr(sp[2]))
	if query != "" {
		u += "&" + query
	}
	return u
}

// Master is the port of the master the sentinels name now.
func (s *RedisSet) Master() (int, error) {
	var lastErr error
	for _, port := range s.sentinelPorts() {
		c := s.client(port)
		addr, err := c.Do(context.Background(), "sentinel", "get-master-addr-by-name", MasterName).StringSlice()
		_ = c.Close()
		if err == nil && len(addr) == 2 {
			return strconv.Atoi(addr[1])
		}
		lastErr = err
	}
	return 0, fmt.Errorf("no sentinel names a master: %v", lastErr)
}

// Kill9 kills the redis-server on port with SIGKILL.
func (s *RedisSet) Kill9(port int) {
	s.t.Helper()
	s.server(port).kill()
}

// Freeze stops the redis-server on port with SIGSTOP: its connections stay open, and it
// answers nothing (a replica so frozen acknowledges no write) until Thaw.
func (s *RedisSet) Freeze(port int) { s.server(port).signal(syscall.SIGSTOP) }

// Thaw resumes a server Freeze stopped.
func (s *RedisSet) Thaw(port int) { s.server(port).signal(syscall.SIGCONT) }

func (s *RedisSet) server(port int) *process {
	s.t.Helper()
	p := s.servers[port]
	if p == nil {
		s.t.Fatalf("no redis-server of this set on %d", port)
	}
	return p
}

// WaitPromoted waits until the sentinels name a master other than old, and that master
// answers as one, and returns its port.
func (s *RedisSet) WaitPromoted(old int, within time.Duration) int {
	s.t.Helper()
	var port int
	ok := waitFor(within, func() bool {
		p, err := s.Master()
		if err != nil || p == old {
			return false
		}
		c := s.client(p)
		defer c.Close()
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "role:master") {
			port = p
			return true
		}
		return false
	})
	if !ok {
		s.dumpLogs()
		s.t.Fatalf("no replica was promoted within %v", within)
	}
	return port
}

// Client is a plain client of the server on port (the caller closes it).
func (s *RedisSet) Client(port int) *goredis.Client { return s.client(port) }

func (s *RedisSet) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(s.dir, "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		s.t.Logf("--- %s:\n%s", filepath.Base(l), b)
	}
}

// PlainURL is the backend URL of the server on the set's first port through host (127.0.0.1 or
// CutHost), without sentinels, with query added.
func (s *RedisSet) PlainURL(host, query string) string {
	u := fmt.Sprintf("redis://%s:%d/0", host, s.Ports[0])
	if query != "" {
		u += "?" + query
	}
	return u
}
