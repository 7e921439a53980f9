package main

import (
	"context"
	"fmt"

	beanpg "github.com/beangate/beangate/backend/postgres"
)

const migrateDBUsage = `Usage: beangate migrate-db --backend postgres://USER@HOST:PORT/DB[?schema=NAME]
Applies the PostgreSQL store's schema migrations, logging each, and exits. It reads the
server's flags, environment and file: --backend may also come from BEANGATE_BACKEND or the
YAML file given with --config (or BEANGATE_CONFIG).
`

// migrateDB is `beangate migrate-db --backend postgres://…`: it applies the Postgres schema
// migrations and exits, for teams that run DDL as its own step and start gateways with
// ?migrate=false.
func migrateDB(ctx context.Context, p process, args []string) int {
	if wantsHelp(args) {
		fmt.Fprint(p.stdout, migrateDBUsage)
		return exitOK
	}
	p.help = "beangate migrate-db --help"
	cfg, log, exit, stop := p.configure(args)
	if stop {
		return exit
	}
	opts, err := beanpg.ParseURL(cfg.Backend)
	if err != nil {
		fmt.Fprintf(p.stderr, "beangate: migrate-db needs a postgres:// --backend: %v\n", err)
		return exitUsage
	}
	opts.Logger = log // each migration applied is logged
	if err := beanpg.MigrateOptions(ctx, opts); err != nil {
		log.Error("migrate-db failed", "backend", redactedURL(cfg.Backend), "err", redactedError(err, cfg.Backend))
		return exitStatus(err)
	}
	log.Info("schema up to date", "backend", redactedURL(cfg.Backend))
	return exitOK
}
