package main

import (
	"context"
	"os"

	"github.com/beangate/beangate/cmd/beangate/ctl"
)

// command is a subcommand, run as `beangate NAME [ARGS]`. It may use p.parseArgs to read the
// same flags, environment and file as the server.
type command func(ctx context.Context, p process, args []string) int

// subcommands lists the names that args[0] may take instead of a flag.
func subcommands() map[string]command {
	return map[string]command{
		"migrate-db":  migrateDB,
		"binlog":      binlogTool,
		"ctl":         ctlTool,
		"migrate":     migrateCmd,
		"healthcheck": healthcheck,
	}
}

// ctlTool is `beangate ctl`, the admin command line (package ctl); it reads none of the
// server's settings.
func ctlTool(ctx context.Context, p process, args []string) int {
	return ctl.Execute(ctx, args, os.Stdin, p.stdout, p.stderr)
}

// wantsHelp reports whether a subcommand's arguments ask for its usage.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
