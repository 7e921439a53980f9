package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
)

// run is main without the process around it: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return process{stdout: stdout, stderr: stderr, commands: subcommands()}.run(ctx, args)
}

// process is what run needs from its surroundings; tests substitute the parts they drive.
type process struct {
	stdout, stderr io.Writer
	// signals delivers SIGUSR1, SIGTERM, SIGINT and SIGHUP; nil subscribes to the process's own.
	signals <-chan os.Signal
	// listening, when set, is told the bound address (tests dial a port-0 server with it).
	listening func(net.Addr)
	// opsListening, when set, is told the ops listener's address (with --http).
	opsListening func(net.Addr)
	commands     map[string]command
	// pid1Cmdline, when set, stands for /proc/1/cmdline split at its NULs (healthcheck).
	pid1Cmdline func() []string
	// help is the command a usage error points to; empty: "beangate --help".
	help string
	// args are the command line serve was configured from, read again on SIGHUP.
	args []string
}

func (p process) run(ctx context.Context, args []string) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if cmd, ok := p.commands[args[0]]; ok {
			return cmd(ctx, p, args[1:])
		}
		// Not a command: parseArgs reports it as a stray argument, as beanstalkd would.
	}
	cfg, log, exit, stop := p.configure(args)
	if stop {
		return exit
	}
	p.args = args
	return p.serve(ctx, cfg, log)
}
