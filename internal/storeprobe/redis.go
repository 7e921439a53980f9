package storeprobe

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	beanredis "github.com/beangate/beangate/backend/redis"
)

type redisProbe struct{ c *redis.Client }

// openRedisProbe takes the gateway's own backend URL (prefix=, timeout= and the like are
// dropped as the backend drops them). One node's INFO is not a Cluster's: not measured there.
func openRedisProbe(ctx context.Context, url string) (*redisProbe, error) {
	c, err := OpenRedisNode(ctx, url)
	if err != nil {
		return nil, err
	}
	return &redisProbe{c: c}, nil
}

// OpenRedisNode connects to the one Redis node of a gateway's backend URL and pings it; the
// bench's figures are one node's, so a Cluster URL is refused.
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

func (p *redisProbe) Sample(ctx context.Context) (Sample, error) {
	text, err := p.c.Info(ctx, "cpu", "commandstats").Result()
	if err != nil {
		return Sample{}, err
	}
	return parseRedisInfo(text)
}

func (p *redisProbe) Close() { _ = p.c.Close() }

// parseRedisInfo reads INFO cpu and commandstats: CPU is used_cpu_sys+used_cpu_user of the
// whole server; commands is every cmdstat_*'s calls (Redis 7 counts calls made from scripts
// too), fcalls those of FCALL and FCALL_RO.
func parseRedisInfo(text string) (Sample, error) {
	s := Sample{WALBytes: -1, Commits: -1, Fsyncs: -1}
	var sawCPU, sawStats bool
	var cpu float64
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch {
		case key == "used_cpu_sys" || key == "used_cpu_user":
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return Sample{}, fmt.Errorf("INFO %s: %w", key, err)
			}
			cpu += v
			sawCPU = true
		case strings.HasPrefix(key, "cmdstat_"):
			calls, err := cmdstatCalls(value)
			if err != nil {
				return Sample{}, fmt.Errorf("INFO %s: %w", key, err)
			}
			s.Commands += calls
			if key == "cmdstat_fcall" || key == "cmdstat_fcall_ro" {
				s.FCalls += calls
			}
			sawStats = true
		}
	}
	if !sawCPU || !sawStats {
		return Sample{}, fmt.Errorf("INFO: no used_cpu_* or cmdstat_* fields")
	}
	s.CPU = time.Duration(cpu * float64(time.Second))
	return s, nil
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
