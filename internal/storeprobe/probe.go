// Package storeprobe reads the counters of the Redis or PostgreSQL behind a gateway, by the
// gateway's own backend URL: the store's CPU (a local server's), Redis commands and FCALLs,
// PostgreSQL WAL bytes, commits and fsyncs. Sampled before and after a measured run, they say
// what a job cost the store.
package storeprobe

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Sample is a store's counters at one moment; a figure the store cannot give is -1.
type Sample struct {
	CPU      time.Duration // the store's CPU so far (all its processes)
	Commands int64         // Redis: commands executed, those called from scripts included
	FCalls   int64         // Redis: FCALLs (one per gateway batch round trip)
	WALBytes int64         // PostgreSQL: WAL bytes generated
	Commits  int64         // PostgreSQL: transactions committed (every database)
	Fsyncs   int64         // PostgreSQL: WAL fsyncs (pg_stat_wal.wal_sync)
	// Masters is each Redis master's main-thread CPU so far, by address: every master of a
	// Cluster, or the one server. One master's main thread runs all its commands, so the
	// busiest one caps the fleet. Nil for PostgreSQL.
	Masters map[string]time.Duration
}

// Unknown is a sample of which nothing is known.
var Unknown = Sample{CPU: -1, Commands: -1, FCalls: -1, WALBytes: -1, Commits: -1, Fsyncs: -1}

// Probe reads the counters of one store.
type Probe interface {
	Sample(ctx context.Context) (Sample, error)
	Close()
}

// Open picks the probe by the URL's scheme: redis://, rediss://, postgres:// or postgresql://.
func Open(ctx context.Context, url string) (Probe, error) {
	scheme, _, _ := strings.Cut(url, "://")
	switch scheme {
	case "redis", "rediss":
		return openRedisProbe(ctx, url)
	case "postgres", "postgresql":
		return openPostgresProbe(ctx, url)
	}
	return nil, fmt.Errorf("store %q: want a redis:// or postgres:// URL", url)
}
