package storeprobe_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/beangate/beangate/backend/backendtest"
	"github.com/beangate/beangate/internal/faulttest"
	"github.com/beangate/beangate/internal/storeprobe"

	"github.com/stretchr/testify/require"
)

// requireServer skips when addr does not answer, except with CI=true, where it fails.
func requireServer(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
		return
	}
	backendtest.Unavailable(t, "%s unreachable: %v", addr, err)
}

// The probes take the gateway's own backend URL, with beangate's query parameters, and read
// real counters from the real servers (REDIS on 6379, PostgreSQL on 5432, local).
func TestStoreProbesReadRealServers(t *testing.T) {
	tests := []struct {
		name, addr, url string
		wantWAL         bool
	}{
		{"redis", "127.0.0.1:6379", "redis://127.0.0.1:6379/0?prefix=bench-probe&timeout=2s", false},
		{"postgres", "127.0.0.1:5432", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&schema=bench_probe&lease_ttl=3s", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireServer(t, tt.addr)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			p, err := storeprobe.Open(ctx, tt.url)
			require.NoError(t, err)
			defer p.Close()
			s, err := p.Sample(ctx)
			require.NoError(t, err)
			require.Positive(t, s.CPU, "a running server has used CPU")
			if tt.wantWAL {
				require.Positive(t, s.WALBytes)
				require.Equal(t, int64(-1), s.Commands)
				require.Nil(t, s.Masters)
			} else {
				require.Positive(t, s.Commands)
				require.Equal(t, int64(-1), s.WALBytes)
				require.Len(t, s.Masters, 1)
				require.Positive(t, s.Masters["127.0.0.1:6379"], "the main thread has used CPU")
			}
		})
	}
}

// With a Cluster URL the probe reads every master, though the URL names only one or two nodes,
// and what a master does shows in its own main-thread CPU.
func TestStoreProbeReadsEveryMasterOfACluster(t *testing.T) {
	c := faulttest.StartRedisCluster(t, 3, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := storeprobe.Open(ctx, c.URL("prefix=bench-probe"))
	require.NoError(t, err)
	defer p.Close()
	before, err := p.Sample(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, c.Masters(), keys(before.Masters))

	busy := c.Node(2) // work on one master only
	defer busy.Close()
	for range 20 {
		require.NoError(t, busy.Eval(ctx, "for i = 1, 200000 do end return 0", nil).Err())
	}
	after, err := p.Sample(ctx)
	require.NoError(t, err)
	used := func(i int) time.Duration { return after.Masters[c.Addr(i)] - before.Masters[c.Addr(i)] }
	require.Greater(t, used(2), 2*(used(0)+used(1)), "the busy master's main thread, not the others'")
	require.Greater(t, after.Commands, before.Commands)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestStoreProbeRefusesWhatItCannotMeasure(t *testing.T) {
	ctx := context.Background()
	for _, url := range []string{"memory://", "redis://127.0.0.1:6379?cluster=true", "mysql://h/db"} {
		_, err := storeprobe.Open(ctx, url)
		require.Error(t, err, url)
	}
}
