// Command beangate-bench drives beanstalk-protocol servers by address and compares them:
// throughput and latency per scenario, median over alternating rounds, ratio to the first
// server, while checking that every job is delivered and deleted exactly once.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 done, 1 a round failed (a server error, a lost or doubly
// delivered job), 2 bad usage.
func run(args []string, stdout io.Writer, stderr *os.File) int {
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "beangate-bench:", err)
		return 2
	}
	raiseOpenFileLimit()
	res, err := compare(cfg.scenario, scenarios[cfg.scenario], cfg.opts, cfg.targets, cfg.rounds, newProgress(stderr))
	if err != nil {
		fmt.Fprintln(stderr, "beangate-bench: FAILED:", err)
		return 1
	}
	if cfg.json {
		err = writeJSON(stdout, res)
	} else {
		err = writeTable(stdout, res)
	}
	if err != nil {
		fmt.Fprintln(stderr, "beangate-bench:", err)
		return 1
	}
	return 0
}

// raiseOpenFileLimit lifts the soft descriptor limit to the hard one: the conns scenario holds
// thousands of sockets.
func raiseOpenFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}
