package storeprobe

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	beanredis "github.com/beangate/beangate/backend/redis"
)

// redisProbe reads every master behind a backend URL: the one server, or each master of a
// Cluster as the cluster names them when the probe opens.
type redisProbe struct {
	addrs   []string
	clients []*redis.Client
	closer  io.Closer // the client that owns clients
}

// openRedisProbe takes the gateway's own backend URL (prefix=, timeout= and the like are
// dropped as the backend drops them). With cluster=true it reads every master of the cluster.
func openRedisProbe(ctx context.Context, url string) (*redisProbe, error) {
	bo, err := beanredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if !bo.Cluster {
		c, err := OpenRedisNode(ctx, url)
		if err != nil {
			return nil, err
		}
		return &redisProbe{addrs: []string{c.Options().Addr}, clients: []*redis.Client{c}, closer: c}, nil
	}
	opts, err := redis.ParseClusterURL(bo.URL)
	if err != nil {
		return nil, err
	}
	cc := redis.NewClusterClient(opts)
	p := &redisProbe{closer: cc}
	var mu sync.Mutex
	err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		p.addrs, p.clients = append(p.addrs, c.Options().Addr), append(p.clients, c)
		return c.Ping(ctx).Err()
	})
	if err != nil {
		cc.Close()
		return nil, err
	}
	return p, nil
}

// OpenRedisNode connects to the one Redis node of a gateway's backend URL and pings it; the
// figures of its callers are one node's, so a Cluster URL is refused.
func OpenRedisNode(ctx context.Context, url string) (*redis.Client, error) {
	bo, err := beanredis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if bo.Cluster {
		return nil, fmt.Errorf("store figures of a Redis Cluster are not measured")
	}
	opts, err := redis.ParseURL(bo.URL)
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(opts)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Sample sums CPU, commands and FCALLs over the masters and keeps each one's main-thread CPU.
func (p *redisProbe) Sample(ctx context.Context) (Sample, error) {
	s := Sample{WALBytes: -1, Commits: -1, Fsyncs: -1, Masters: map[string]time.Duration{}}
	for i, c := range p.clients {
		text, err := c.Info(ctx, "cpu", "commandstats").Result()
		if err != nil {
			return Sample{}, fmt.Errorf("master %s: %w", p.addrs[i], err)
		}
		n, err := parseRedisInfo(text)
		if err != nil {
			return Sample{}, fmt.Errorf("master %s: %w", p.addrs[i], err)
		}
		s.CPU += n.cpu
		s.Commands += n.commands
		s.FCalls += n.fcalls
		s.Masters[p.addrs[i]] = n.mainThread
	}
	return s, nil
}

func (p *redisProbe) Close() { _ = p.closer.Close() }

// redisNode is one server's INFO cpu and commandstats.
type redisNode struct {
	cpu, mainThread  time.Duration
	commands, fcalls int64
}

// parseRedisInfo reads INFO cpu and commandstats: cpu is used_cpu_sys+used_cpu_user of the
// whole server, mainThread used_cpu_sys_main_thread+used_cpu_user_main_thread (the thread
// that runs every command, the one that caps a master); commands is every cmdstat_*'s calls
// (Redis 7 counts calls made from scripts too), fcalls those of FCALL and FCALL_RO.
func parseRedisInfo(text string) (redisNode, error) {
	var n redisNode
	var cpu, main float64
	var sawCPU, sawMain, sawStats bool
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch {
		case key == "used_cpu_sys" || key == "used_cpu_user",
			key == "used_cpu_sys_main_thread" || key == "used_cpu_user_main_thread":
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return redisNode{}, fmt.Errorf("INFO %s: %w", key, err)
			}
			if strings.HasSuffix(key, "_main_thread") {
				main += v
				sawMain = true
			} else {
				cpu += v
				sawCPU = true
			}
		case strings.HasPrefix(key, "cmdstat_"):
			calls, err := cmdstatCalls(value)
			if err != nil {
				return redisNode{}, fmt.Errorf("INFO %s: %w", key, err)
			}
			n.commands += calls
			if key == "cmdstat_fcall" || key == "cmdstat_fcall_ro" {
				n.fcalls += calls
			}
			sawStats = true
		}
	}
	if !sawCPU || !sawMain || !sawStats {
		return redisNode{}, fmt.Errorf("INFO: no used_cpu_*, used_cpu_*_main_thread or cmdstat_* fields (Redis 7 or later gives them)")
	}
	n.cpu = time.Duration(cpu * float64(time.Second))
	n.mainThread = time.Duration(main * float64(time.Second))
	return n, nil
}

// cmdstatCalls reads calls= from "calls=N,usec=...,...".
func cmdstatCalls(value string) (int64, error) {
	for _, field := range strings.Split(value, ",") {
		if n, ok := strings.CutPrefix(field, "calls="); ok {
			return strconv.ParseInt(n, 10, 64)
		}
	}
	return 0, fmt.Errorf("no calls= in %q", value)
}
