// Package ctl is `beangate ctl`: an admin command line for any beanstalk server. It speaks the
// beanstalk protocol (so it works with beanstalkd as well, before, during and after a
// migration) and, given a beangate's ops listener (--api), uses the console's JSON API for what
// the protocol lacks: listing jobs, and flushing or moving them in bulk.
package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// options are the flags every command shares.
type options struct {
	addr     string // beanstalk protocol address
	api      string // a beangate's ops listener URL; empty: protocol only
	token    string // `auth` token and API Bearer token
	user     string // console Basic Auth
	password string
	output   string // text or json
	tls      ctlTLS
	stdout   io.Writer
	stderr   io.Writer
	stdin    io.Reader
}

// Execute runs `beangate ctl ARGS` and returns the exit status: 0, 1 for a failed command, 2
// for a usage error.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := &options{stdout: stdout, stderr: stderr, stdin: stdin}
	root := &cobra.Command{
		Use:   "beangate ctl",
		Short: "Inspect and manage any beanstalk server (beanstalkd or beangate)",
		Long: `beangate ctl speaks the beanstalk protocol to any server, beanstalkd included.
With --api naming a beangate's ops listener (--http), list, flush and move use its JSON API:
jobs are listed in order and flushed or moved in bulk, ids kept. Against beanstalkd they fall
back to the protocol and say what it cannot do. Against a TLS listener give --tls-ca FILE (or
--tls for a certificate of the system's roots); the TLS options serve an https:// --api too.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every usage line then reads "beangate ctl put …", which works when copied.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "beangate ctl"},
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if o.output != "text" && o.output != "json" {
				return usageError{fmt.Errorf("-o %q: text or json", o.output)}
			}
			return o.tls.load()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&o.addr, "addr", "a", envOr("BEANGATE_CTL_ADDR", "127.0.0.1:11300"), "beanstalk server `HOST:PORT` (env BEANGATE_CTL_ADDR)")
	pf.StringVar(&o.api, "api", os.Getenv("BEANGATE_CTL_API"), "a beangate's ops listener `URL`, e.g. http://127.0.0.1:9110 (env BEANGATE_CTL_API)")
	pf.StringVar(&o.token, "token", os.Getenv("BEANGATE_CTL_TOKEN"), "auth `TOKEN`: sent as `auth` on the protocol and as a Bearer token to the API (env BEANGATE_CTL_TOKEN)")
	pf.StringVar(&o.user, "user", "admin", "console Basic Auth `USER`")
	pf.StringVar(&o.password, "password", os.Getenv("BEANGATE_CTL_PASSWORD"), "console Basic Auth password (env BEANGATE_CTL_PASSWORD)")
	pf.StringVarP(&o.output, "output", "o", "text", "output `FORMAT`: text or json")
	o.tls.flags(pf)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(commands(o)...)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "beangate ctl:", o.withHint(err))
	var u usageError
	if errors.As(err, &u) || isCobraUsage(err) {
		return 2
	}
	return 1
}

type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// isCobraUsage tells cobra's own argument errors (unknown command, wrong argument count).
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "unknown flag", "unknown shorthand"} {
		if len(s) >= len(p) && contains(s, p) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
