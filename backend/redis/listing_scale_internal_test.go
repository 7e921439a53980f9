package redis

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// TestListingAndFlushAtScale measures listing and flushing a 1M-job tube: a page of 100 from
// the middle, and the longest single call of a flush (each call is one Lua function, during
// which Redis serves nobody else). The jobs are written straight into the namespace's keys
// (the layout of lua/lib.lua), pipelined, as a million puts would take long. A measurement,
// not a check run by default: BEANGATE_SCALE=1 (BEANGATE_SCALE_JOBS to change the count).
func TestListingAndFlushAtScale(t *testing.T) {
	if os.Getenv("BEANGATE_SCALE") != "1" {
		t.Skip("a measurement: BEANGATE_SCALE=1")
	}
	jobs := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("BEANGATE_SCALE_JOBS")); err == nil {
		jobs = n
	}
	prefix := newPrefix(t)
	b := newTestBackend(t, prefix, nil, 0)
	ctx := context.Background()
	_, err := b.Put(ctx, backend.PutParams{Tube: "big", TTR: time.Minute, Body: []byte("x")}) // creates the tube
	require.NoError(t, err)
	c, err := testClient(redisURL())
	require.NoError(t, err)
	defer c.Close()
	base := "{" + prefix + "}"
	start := time.Now()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	body := make([]byte, 100)
	for i := 0; i < jobs; i += 10_000 {
		p := c.Pipeline()
		for j := i; j < min(i+10_000, jobs); j++ {
			m := padID(uint64(1_000_000 + j))
			pri := rand.IntN(100)
			p.HSet(ctx, base+":j:"+m, "b", body, "t", "big", "p", pri, "ttr", 60000, "d", 0, "c", now, "s", "ready", "a", 0)
			p.ZAdd(ctx, base+":t:big:ready", goredisZ(float64(pri), m))
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
	}
	t.Logf("filled %d jobs in %v", jobs, time.Since(start))

	backendtest.MeasureListingAndFlush(t, b, "big", jobs, 0)
}

func goredisZ(score float64, member string) goredis.Z { return goredis.Z{Score: score, Member: member} }
