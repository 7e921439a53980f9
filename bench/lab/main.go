// Command lab holds measurements of what beangate's work costs that are not the product's
// benchmark (cmd/beangate-bench compares servers; bench/run.sh drives it): experiments whose
// figures docs/benchmarks*.md cite, run from a checkout.
//
//	go run ./bench/lab floor -store URL [flags]
//
// floor: what the least possible job queue (put, reserve, delete, nothing else) costs a Redis
// or PostgreSQL at a given batch size: the floor beangate's own store cost per job approaches.
//
// The store-side measurements that need a store package's internals are benchmarks in it:
// BenchmarkLuaCost (backend/redis), BenchmarkListingAndFlushAtScale (backend/redis and
// backend/postgres) and BenchmarkMover (cmd/beangate/migrate).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 done, 1 a measurement failed, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "floor":
		return runFloor(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "lab: unknown experiment %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lab floor -store URL [flags]   what the least possible queue costs the store (floor -h)")
}
