package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/backend/memory/binlog"
	"github.com/beangate/beangate/cmd/beangate/migrate"
	"github.com/beangate/beangate/configs"
)

const migrateUsage = `Usage: beangate migrate --from SRC --to DST [--follow] [--dry-run] [--tubes GLOB] [--batch N]

Moves every job off a beanstalk server, exactly once: each job is imported with its id (where
the destination is a beangate store that has no job with that id), state, priority, TTR, body,
remaining delay, counters and age, and deleted at the source only once the destination has
committed it. Killed at any point, run it again: nothing is lost, nothing is doubled.

  --from SRC   beanstalk://HOST:PORT  a running server (beanstalkd 1.12+ for delayed and buried jobs)
               binlog:DIR             a stopped beanstalkd's (or beangate's) binlog directory
  --to DST     binlog:DIR             a directory beangate -b DIR (or beanstalkd) will serve
               redis://… postgres://… a beangate store
               beanstalk://HOST:PORT  any beanstalk server (new ids; at least once)
               beanstalks://HOST:PORT a beanstalk server over TLS, as SRC or DST; parameters:
                 ?ca=FILE             check its certificate against these PEM CAs (default:
                                      the system's roots)
                 &cert=FILE&key=FILE  a client certificate and its key (mutual TLS)
                 &server_name=NAME    the name its certificate must carry (default: HOST)
  --follow     keep moving what arrives at a beanstalk[s]:// source until stopped (SIGINT/SIGTERM)
  --dry-run    print what would move, per tube and state, and which --compat suits the
               source; with --to, also check the destination (reachable, Redis persistence
               and eviction, PostgreSQL schema and privileges, ids already used there), move
               nothing and exit (1 if the destination cannot be reached or used)
  --tubes GLOB move only the tubes whose name matches (shell pattern, e.g. 'email-*')
  --batch N    jobs per import (default 1000)
  --progress   bar, lines (a log line every 5 s) or none; default: a bar on a terminal, else lines
`

// migrateCmd is `beangate migrate`.
func migrateCmd(ctx context.Context, p process, args []string) int {
	fs := pflag.NewFlagSet("migrate", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // a usage error is one line, printed below; help is asked for
	fs.Usage = func() {}
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	follow := fs.Bool("follow", false, "")
	dry := fs.Bool("dry-run", false, "")
	tubes := fs.String("tubes", "", "")
	batch := fs.Int("batch", 1000, "")
	progress := fs.String("progress", "auto", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(p.stdout, migrateUsage)
			return exitOK
		}
		return migrateUsageError(p, "%v", err)
	}
	switch {
	case *from == "":
		return migrateUsageError(p, "--from is required")
	case *to == "" && !*dry:
		return migrateUsageError(p, "--to is required (or --dry-run)")
	case fs.NArg() > 0:
		return migrateUsageError(p, "unexpected argument %q", fs.Arg(0))
	}
	log := slog.New(slog.NewTextHandler(p.stderr, nil))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	src, err := migrate.OpenSource(ctx, *from, *tubes, *follow, log)
	if err != nil {
		return migrateFailed(p, "opening "+*from, err)
	}
	defer src.Close()
	plans, err := src.Plan(ctx)
	if err != nil {
		return migrateFailed(p, "reading "+*from, err)
	}
	if *dry {
		migrate.PrintPlan(p.stdout, src.Name(), plans)
		migrate.PrintSource(p.stdout, src.Version())
		if *to == "" {
			fmt.Fprintln(p.stdout, "destination: not checked (give --to to check it)")
			return exitOK
		}
		chk, err := migrate.CheckDestination(ctx, *to, redactedURL(*to), src)
		chk.Print(p.stdout)
		if err != nil {
			return migrateFailed(p, "checking "+redactedURL(*to), err)
		}
		return exitOK
	}
	flag, why := migrate.Compat(src.Version())
	log.Info("migrate: source", "version", src.Version(), "compat", flag, "advice", why)
	dst, err := openMigrateDest(ctx, *to, log)
	if err != nil {
		return migrateFailed(p, "opening "+redactedURL(*to), err)
	}
	defer dst.Close()
	total := migrate.Total(plans)
	if *follow {
		total = -1
	}
	opts := migrate.Options{Batch: *batch, Log: log}
	switch *progress {
	case "bar":
		opts.Progress = migrate.NewBar(p.stderr, total)
	case "lines":
		opts.Progress = migrate.NewLines(log, total, 5*time.Second)
	case "auto":
		if f, ok := p.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			opts.Progress = migrate.NewBar(p.stderr, total)
		} else {
			opts.Progress = migrate.NewLines(log, total, 5*time.Second)
		}
	}
	rep, err := migrate.Run(ctx, src, dst, opts)
	rep.Destination = redactedURL(*to)
	rep.Print(p.stdout)
	if err != nil {
		return migrateFailed(p, "migrating", err)
	}
	return exitOK
}

// openMigrateDest opens --to: binlog:DIR as the memory backend on that directory (its lock
// held), beanstalk[s]:// as a protocol client, anything else as the backend URL of --backend.
func openMigrateDest(ctx context.Context, to string, log *slog.Logger) (migrate.Destination, error) {
	switch {
	case migrate.IsBeanstalkURL(to):
		return migrate.OpenBeanstalkDest(ctx, to)
	case strings.HasPrefix(to, "binlog:"):
		dir := strings.TrimPrefix(to, "binlog:")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		// -f0: every import is on disk before the source deletes its jobs.
		b, err := memory.Open(memory.Options{Binlog: &binlog.Options{Dir: dir, Logger: log}})
		if err != nil {
			return nil, err
		}
		return migrate.NewBinlogDest(b), nil
	}
	b, err := openBackend(ctx, configs.Config{Backend: to}, log)
	if err != nil {
		return nil, err
	}
	return migrate.NewStoreDest(b), nil
}

// migrateUsageError prints what was wrong with the command line in one line, as the server's
// usage errors do, and where the whole usage is.
func migrateUsageError(p process, format string, a ...any) int {
	fmt.Fprintf(p.stderr, "beangate migrate: "+format+"\n", a...)
	fmt.Fprintln(p.stderr, "Try 'beangate migrate --help' for more information.")
	return exitUsage
}

func migrateFailed(p process, what string, err error) int {
	if errors.Is(err, binlog.ErrLocked) {
		fmt.Fprintf(p.stderr, "beangate: migrate: %s: the directory is in use by a running server (beanstalkd or beangate); stop it first, or migrate from it online with --from beanstalk://HOST:PORT\n", what)
		return exitLocked
	}
	if errors.Is(err, migrate.ErrBadURL) {
		fmt.Fprintf(p.stderr, "beangate: migrate: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(p.stderr, "beangate: migrate: %s: %v\n", what, err)
	return exitStatus(err)
}
