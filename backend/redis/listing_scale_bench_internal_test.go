package redis

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// BenchmarkListingAndFlushAtScale measures listing and flushing a big tube
// (backendtest.BenchmarkListingAndFlushAtScale), each flush call one Lua function during which
// Redis serves nobody else. The jobs are written straight into the namespace's keys (the layout
// of lua/lib.lua), pipelined.
func BenchmarkListingAndFlushAtScale(b *testing.B) {
	prefix := newPrefix(b)
	store := newTestBackend(b, prefix, nil, 0)
	ctx := context.Background()
	_, err := store.Put(ctx, backend.PutParams{Tube: "big", TTR: time.Minute, Body: []byte("x")}) // creates the tube
	require.NoError(b, err)
	c, err := testClient(redisURL())
	require.NoError(b, err)
	defer c.Close()
	backendtest.BenchmarkListingAndFlushAtScale(b, store, "big", func(jobs int) {
		base := "{" + prefix + "}"
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		body := make([]byte, 100)
		for i := 0; i < jobs; i += 10_000 {
			p := c.Pipeline()
			for j := i; j < min(i+10_000, jobs); j++ {
				m := padID(uint64(1_000_000 + j))
				pri := rand.IntN(100)
				p.HSet(ctx, base+":j:"+m, "b", body, "t", "big", "p", pri, "ttr", 60000, "d", 0, "c", now, "s", "ready", "a", 0)
				p.ZAdd(ctx, base+":t:big:ready", goredis.Z{Score: float64(pri), Member: m})
			}
			_, err := p.Exec(ctx)
			require.NoError(b, err)
		}
	})
}
