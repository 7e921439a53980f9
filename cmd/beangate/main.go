// Command beangate serves the beanstalkd protocol over a pluggable job store. It accepts
// beanstalkd's own flags (-l -p -z -V -v -h …) so it can replace beanstalkd in a unit file.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
