package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/beangate/beangate/internal/storeprobe"
)

// floor measures what the least possible job queue costs a store on this machine: a job of three
// operations (put, reserve, delete) with nothing around them (floor_redis.lua,
// floor_postgres.sql), sent by one connection, a given number of operations per round trip, as a
// gateway's batcher sends them. It answers how far beangate's own store cost per job can fall
// at a given batch size, in the same run: the store CPU per job of a real backend can only
// approach it. The driver's own CPU per job is the client side of the same round trips, the
// least a gateway pays for them besides the protocol work the memory backend also does.
type floorStore interface {
	// roundTrip runs ops (each 'p', 'r' or 'd') in one round trip: one call, one commit.
	roundTrip(ctx context.Context, ops []byte) error
	// settle is run between rounds, outside the measured time.
	settle(ctx context.Context) error
	Close()
}

type floorConfig struct {
	store    string
	opsPerRT []int
	body     int
	duration time.Duration
	rounds   int
}

func parseFloorConfig(args []string, stderr io.Writer) (*floorConfig, error) {
	fs := flag.NewFlagSet("lab floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &floorConfig{}
	fs.StringVar(&cfg.store, "store", "", "a store nobody else uses, `redis://… or postgres://…` (PostgreSQL: a scratch schema is created and dropped)")
	ops := fs.String("ops", "1,3,5,16", "operations per round trip, `n,...` (a gateway's batch size: about 5 at 16 connections)")
	fs.IntVar(&cfg.body, "body", 100, "job body size in bytes")
	fs.DurationVar(&cfg.duration, "duration", 3*time.Second, "measuring time per round")
	fs.IntVar(&cfg.rounds, "rounds", 3, "rounds per batch size")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if cfg.store == "" {
		return nil, errors.New("-store is required")
	}
	for _, f := range strings.Split(*ops, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("-ops: %q is not a number of operations from 1 to 1000", f)
		}
		cfg.opsPerRT = append(cfg.opsPerRT, n)
	}
	switch {
	case cfg.body < 0 || cfg.body > 65535:
		return nil, errors.New("-body must be 0..65535")
	case cfg.duration <= 0 || cfg.rounds < 1:
		return nil, errors.New("-duration must be positive and -rounds at least 1")
	}
	return cfg, nil
}

func openFloorStore(ctx context.Context, url string, body int) (floorStore, error) {
	scheme, _, _ := strings.Cut(url, "://")
	switch scheme {
	case "redis", "rediss":
		return openRedisFloor(ctx, url, body)
	case "postgres", "postgresql":
		return openPostgresFloor(ctx, url, body)
	}
	return nil, fmt.Errorf("store %q: want a redis:// or postgres:// URL", url)
}

// floorRound is one measured round at one batch size.
type floorRound struct {
	jobs, roundTrips  int64
	elapsed           time.Duration
	storeCPU, ownCPU  time.Duration
	commands, commits int64 // -1: not known
}

// runFloor is `lab floor`: exit 0 done, 1 a store failed, 2 bad usage.
func runFloor(args []string, stdout io.Writer, stderr io.Writer) int {
	cfg, err := parseFloorConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "lab floor:", err)
		return 2
	}
	ctx := context.Background()
	probe, err := storeprobe.Open(ctx, cfg.store)
	if err != nil {
		fmt.Fprintln(stderr, "lab floor:", err)
		return 1
	}
	defer probe.Close()
	st, err := openFloorStore(ctx, cfg.store, cfg.body)
	if err != nil {
		fmt.Fprintln(stderr, "lab floor:", err)
		return 1
	}
	defer st.Close()

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(stdout, "floor of %s: one connection, %d-byte bodies, %d rounds of %s per batch size, medians\n",
		redactURL(cfg.store), cfg.body, cfg.rounds, cfg.duration)
	fmt.Fprintln(tw, "ops per round trip\tjobs/s\tstore CPU per job (µs)\tdriver CPU per job (µs)\tround trips per job\tstore commands per job\tcommits per job\t")
	for _, n := range cfg.opsPerRT {
		var jobsPerSec, store, own, rts, cmds, commits []float64
		for r := 0; r < cfg.rounds; r++ {
			fmt.Fprintf(stderr, "[floor] %d ops per round trip, round %d/%d\n", n, r+1, cfg.rounds)
			if err := st.settle(ctx); err != nil {
				fmt.Fprintln(stderr, "lab floor:", err)
				return 1
			}
			res, err := floorRoundRun(ctx, st, probe, n, cfg.duration)
			if err != nil {
				fmt.Fprintln(stderr, "lab floor:", err)
				return 1
			}
			jobs := float64(res.jobs)
			jobsPerSec = append(jobsPerSec, jobs/res.elapsed.Seconds())
			store = append(store, float64(res.storeCPU)/float64(time.Microsecond)/jobs)
			own = append(own, float64(res.ownCPU)/float64(time.Microsecond)/jobs)
			rts = append(rts, float64(res.roundTrips)/jobs)
			cmds = append(cmds, perJob(res.commands, res.jobs))
			commits = append(commits, perJob(res.commits, res.jobs))
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%s\t%s\t%.2f\t%s\t%s\t\n", n, median(jobsPerSec),
			figure(median(store)), figure(median(own)), median(rts), figure(median(cmds)), figure(median(commits)))
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintln(stderr, "lab floor:", err)
		return 1
	}
	return 0
}

// floorRoundRun sends round trips of n operations for d, rotating put, reserve, delete across
// them (a batch of 5 holds, in turn, p r d p r, d p r d p, …), and measures the store's CPU and
// this process's around them. A job is three operations.
func floorRoundRun(ctx context.Context, st floorStore, probe storeprobe.Probe, n int, d time.Duration) (floorRound, error) {
	var res floorRound
	kinds := [3]byte{'p', 'r', 'd'}
	ops := make([]byte, n)
	before, err := probe.Sample(ctx)
	if err != nil {
		return res, err
	}
	ownBefore := selfCPU()
	start := time.Now()
	var i, sent int64
	for time.Since(start) < d {
		for k := range ops {
			ops[k] = kinds[i%3]
			i++
		}
		if err := st.roundTrip(ctx, ops); err != nil {
			return res, err
		}
		sent++
	}
	res.elapsed = time.Since(start)
	res.ownCPU = selfCPU() - ownBefore
	after, err := probe.Sample(ctx)
	if err != nil {
		return res, err
	}
	res.jobs, res.roundTrips = i/3, sent
	res.storeCPU = after.CPU - before.CPU
	res.commands, res.commits = -1, -1
	if before.Commands >= 0 && after.Commands >= 0 {
		res.commands = after.Commands - before.Commands
	}
	if before.Commits >= 0 && after.Commits >= 0 {
		res.commits = after.Commits - before.Commits
	}
	return res, nil
}

// redactURL drops a password from a store URL before it is printed.
func redactURL(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxx@" + host
	}
	return url
}
