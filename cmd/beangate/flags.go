package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/beangate/beangate/cmd/beangate/ctl"
	"github.com/beangate/beangate/configs"
)

// newFlagSet returns the command line: the configuration flags of package configs plus the
// ones that only steer this process. pflag is used with a single-letter shorthand for every
// beanstalkd flag, so both beanstalkd's spelling (-l ADDR, -p11300, -VV, -f0) and a long one
// (--listen ADDR) work; that is the least surprising choice for someone swapping the binary
// in an existing unit file. Errors and usage are printed by the caller.
func newFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("beangate", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	configs.AddFlags(fs)
	fs.BoolP("version", "v", false, "print the version and exit")
	fs.BoolP("help", "h", false, "print this help and exit")
	fs.StringP("user", "u", "", "beanstalkd's setuid to `USER`: not supported, start beangate as that user")
	// beanstalkd still accepts -c and -n with a warning; so do we. Hidden: they do nothing.
	fs.BoolP("removed-c", "c", false, "")
	fs.BoolP("removed-n", "n", false, "")
	_ = fs.MarkHidden("removed-c")
	_ = fs.MarkHidden("removed-n")
	return fs
}

func printUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, `Usage: beangate [OPTIONS]

Serves the beanstalkd %s protocol; the jobs live in the --backend store.
beanstalkd's own flags work as there (-l -p -z -b -f -F -s -V -v -h); each also has
a long form. Every setting can come from a flag, from BEANGATE_<KEY> in the environment
(BEANGATE_PORT, BEANGATE_BACKEND, BEANGATE_MAX_JOB_SIZE, ...) or from the YAML file given
with --config, in that order of precedence.

Options:
%s
Commands (before any option):
  beangate migrate-db --backend postgres://...   apply the PostgreSQL schema migrations
  beangate binlog inspect DIR                    report a stopped server's binlog directory
  beangate binlog compact DIR                    rewrite it to its live jobs only
  beangate migrate --from SRC --to DST [--follow] [--dry-run] [--tubes GLOB]
                                                 move every job off a beanstalkd, exactly once
                                                 (beangate migrate --help for details)
  beangate ctl COMMAND [ARGS]                    %s
  beangate healthcheck [--live] [OPTIONS]        exit 0 if the ops listener's /readyz (--live:
                                                 /healthz) answers 200: a container's health check
`, protocolVersion, fs.FlagUsages(), ctlSummary())
}

// ctlSummary describes `beangate ctl` with ctl's own list of commands, wrapped to the usage's
// right-hand column.
func ctlSummary() string {
	const indent, width = 49, 97
	words := strings.Fields("inspect and manage any beanstalk server: " + strings.Join(ctl.CommandNames(), ", ") +
		" (beangate ctl --help for details)")
	var b strings.Builder
	col := indent
	for i, w := range words {
		switch {
		case i == 0:
		case col+1+len(w) > width:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}
