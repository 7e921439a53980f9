package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is the parsed command line.
type config struct {
	targets  []target
	scenario string
	opts     options
	rounds   int
	json     bool
}

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("beangate-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: beangate-bench -servers name=host:port,... [flags]   compare beanstalk servers")
		fs.PrintDefaults()
	}
	cfg := &config{}
	servers := fs.String("servers", "", "servers to compare, `name=host:port,...`; ratios are to the first")
	pids := fs.String("pid", "", "server pids for the conns scenario and CPU per job, `name=PID,...` (default: found by port in /proc)")
	stores := fs.String("store", "", "the store behind a gateway target, `name=URL,...` (redis:// or postgres://): adds its CPU, commands and WAL per job")
	fs.StringVar(&cfg.scenario, "scenario", "cycle", "put, cycle, tubes, drain, reserve-wait, delayed, open-loop or conns")
	fs.IntVar(&cfg.opts.Conns, "conns", 16, "connections (producers+consumers; per tube for tubes; consumers for reserve-wait/delayed/drain; waiting workers for open-loop; idle ones for conns)")
	fs.IntVar(&cfg.opts.Pipeline, "pipeline", 1, "puts in flight per producer connection")
	fs.IntVar(&cfg.opts.Body, "body", 100, "job body size in bytes (at least 16 for reserve-wait and delayed, 32 for open-loop)")
	fs.IntVar(&cfg.opts.Tubes, "tubes", 1, "tubes per round (fresh random names every round)")
	fs.DurationVar(&cfg.opts.Duration, "duration", 5*time.Second, "measuring time per round (open-loop: 10s unless given)")
	fs.IntVar(&cfg.opts.Jobs, "jobs", 0, "put: stop after this many jobs (0: duration only); drain: jobs to pre-load (0: 50000)")
	fs.IntVar(&cfg.opts.Backlog, "backlog", 1000, "cycle: producers pause while this many jobs wait (0: no limit)")
	fs.DurationVar(&cfg.opts.Interval, "interval", 2*time.Millisecond, "reserve-wait, delayed: time between trickled puts")
	fs.IntVar(&cfg.opts.Rate, "rate", 2000, "open-loop: jobs per second offered, over all producers")
	fs.IntVar(&cfg.opts.Producers, "producers", 4, "open-loop: producer connections sharing the offered rate")
	fs.DurationVar(&cfg.opts.Warmup, "warmup", 2*time.Second, "open-loop: load offered before the measured window, not counted")
	fs.DurationVar(&cfg.opts.Handler, "handler", 0, "open-loop: time a worker holds each job before deleting it")
	fs.IntVar(&cfg.rounds, "rounds", 5, "rounds per server, alternating between servers")
	fs.BoolVar(&cfg.json, "json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var err error
	if cfg.targets, err = parseTargets(*servers, *pids); err != nil {
		return nil, err
	}
	if err = parseStores(cfg.targets, *stores); err != nil {
		return nil, err
	}
	if cfg.scenario == "drain" && cfg.opts.Jobs == 0 {
		cfg.opts.Jobs = 50000
	}
	if cfg.scenario == "open-loop" && !flagGiven(fs, "duration") {
		cfg.opts.Duration = openLoopDuration
	}
	return cfg, cfg.validate()
}

func (c *config) validate() error {
	o := c.opts
	switch {
	case scenarios[c.scenario] == nil:
		return fmt.Errorf("unknown scenario %q", c.scenario)
	case o.Conns < 1, o.Pipeline < 1, o.Tubes < 1, c.rounds < 1:
		return errors.New("-conns, -pipeline, -tubes and -rounds must be at least 1")
	case o.Body < 0 || o.Body > 65535:
		return errors.New("-body must be 0..65535 (beanstalkd's default max job size)")
	case o.Duration <= 0 || o.Interval <= 0:
		return errors.New("-duration and -interval must be positive")
	case o.Jobs < 0 || o.Backlog < 0:
		return errors.New("-jobs and -backlog must not be negative")
	case o.Rate < 1 || o.Rate > maxRate || o.Producers < 1:
		return fmt.Errorf("-rate must be 1..%d and -producers at least 1", maxRate)
	case o.Warmup < 0 || o.Handler < 0:
		return errors.New("-warmup and -handler must not be negative")
	}
	return nil
}

// openLoopDuration is open-loop's measured window unless -duration says otherwise: long enough
// for its tail percentiles to rest on thousands of jobs.
const openLoopDuration = 10 * time.Second

// maxRate keeps a schedule's arithmetic (nanoseconds times jobs per second) far from overflow.
const maxRate = 1_000_000

// flagGiven reports whether the command line set the flag, as opposed to its default applying.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseTargets reads "name=addr,..." (a bare addr is its own name) and "name=pid,...".
func parseTargets(servers, pids string) ([]target, error) {
	if servers == "" {
		return nil, errors.New("-servers is required")
	}
	var targets []target
	seen := map[string]bool{}
	for _, item := range strings.Split(servers, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			addr = name
		}
		parts := strings.Split(addr, "+")
		if name == "" || len(parts) > 2 || slices.Contains(parts, "") || seen[name] {
			return nil, fmt.Errorf("-servers: bad or repeated entry %q (want name=host:port or name=host:port+host:port)", item)
		}
		seen[name] = true
		targets = append(targets, target{Name: name, Addr: addr})
	}
	if pids == "" {
		return targets, nil
	}
	for _, item := range strings.Split(pids, ",") {
		name, pidText, _ := strings.Cut(strings.TrimSpace(item), "=")
		pid, err := strconv.Atoi(pidText)
		i := indexOfTarget(targets, name)
		if err != nil || pid <= 0 || i < 0 {
			return nil, fmt.Errorf("-pid: bad entry %q (want name=PID for a name in -servers)", item)
		}
		targets[i].PID = pid
	}
	return targets, nil
}

func indexOfTarget(targets []target, name string) int {
	for i, t := range targets {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// parseStores reads "name=URL,..." into the named targets' Store.
func parseStores(targets []target, stores string) error {
	if stores == "" {
		return nil
	}
	for _, item := range strings.Split(stores, ",") {
		name, url, _ := strings.Cut(strings.TrimSpace(item), "=")
		i := indexOfTarget(targets, name)
		if url == "" || i < 0 {
			return fmt.Errorf("-store: bad entry %q (want name=URL for a name in -servers)", item)
		}
		targets[i].Store = url
	}
	return nil
}
