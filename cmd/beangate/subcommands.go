package main

import "context"

// command is a subcommand, run as `beangate NAME [ARGS]`. It may use p.parseArgs to read the
// same flags, environment and file as the server.
type command func(ctx context.Context, p process, args []string) int

// subcommands lists the names that args[0] may take instead of a flag.
func subcommands() map[string]command {
	return map[string]command{
		"migrate-db": migrateDB,
		"binlog":     binlogTool,
		"migrate":    migrateCmd,
	}
}
