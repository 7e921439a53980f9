package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// storeSample is a store's counters at one moment; a figure the store cannot give is -1.
type storeSample struct {
	cpu      time.Duration // the store's CPU so far (all its processes)
	commands int64         // Redis: commands executed, those called from scripts included
	fcalls   int64         // Redis: FCALLs (one per gateway batch round trip)
	walBytes int64         // PostgreSQL: WAL bytes generated
	commits  int64         // PostgreSQL: transactions committed (every database)
	fsyncs   int64         // PostgreSQL: WAL fsyncs (pg_stat_wal.wal_sync)
}

// unknownSample is a sample of which nothing is known.
var unknownSample = storeSample{cpu: -1, commands: -1, fcalls: -1, walBytes: -1, commits: -1, fsyncs: -1}

// storeProbe reads the counters of the store behind a gateway, so a round can report what a job
// costs the store next to what it costs the gateway.
type storeProbe interface {
	sample(ctx context.Context) (storeSample, error)
	Close()
}

// openStoreProbe picks the probe by the URL's scheme.
func openStoreProbe(ctx context.Context, url string) (storeProbe, error) {
	scheme, _, _ := strings.Cut(url, "://")
	switch scheme {
	case "redis", "rediss":
		return openRedisProbe(ctx, url)
	case "postgres", "postgresql":
		return openPostgresProbe(ctx, url)
	}
	return nil, fmt.Errorf("store %q: want a redis:// or postgres:// URL", url)
}

// perJob is (after-before)/jobs, NaN when either side is unknown or there were no jobs.
func perJob(before, after, jobs int64) float64 {
	if before < 0 || after < 0 || jobs <= 0 {
		return math.NaN()
	}
	return float64(after-before) / float64(jobs)
}

// storeMetrics are a round's store figures per job, always the same list so rounds line up.
func storeMetrics(before, after storeSample, jobs int64) []metric {
	cpu := math.NaN()
	if jobs > 0 {
		cpu = float64(after.cpu-before.cpu) / float64(time.Microsecond) / float64(jobs)
	}
	return []metric{
		{Name: "store CPU per job", Unit: "µs", Value: cpu, Lower: true},
		{Name: "store commands per job", Unit: "cmds", Value: perJob(before.commands, after.commands, jobs), Lower: true},
		{Name: "store FCALLs per job", Unit: "calls", Value: perJob(before.fcalls, after.fcalls, jobs), Lower: true},
		{Name: "store WAL per job", Unit: "bytes", Value: perJob(before.walBytes, after.walBytes, jobs), Lower: true},
		{Name: "store commits per job", Unit: "xacts", Value: perJob(before.commits, after.commits, jobs), Lower: true},
		{Name: "store fsyncs per job", Unit: "syncs", Value: perJob(before.fsyncs, after.fsyncs, jobs), Lower: true},
	}
}
