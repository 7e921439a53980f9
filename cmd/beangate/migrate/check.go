package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory/binlog"
	beanpg "github.com/beangate/beangate/backend/postgres"
	beanredis "github.com/beangate/beangate/backend/redis"
)

// ErrUnreachable wraps a destination --dry-run could not reach.
var ErrUnreachable = errors.New("unreachable")

// checkTimeout bounds each round trip of a check: a destination that does not answer within it
// is as good as unreachable for a dry run.
const checkTimeout = 5 * time.Second

// DestCheck is what --dry-run found at the destination: whether it can be reached and used,
// its settings that risk jobs, and the source's jobs whose ids it already uses.
type DestCheck struct {
	Destination string
	Facts       []Fact
	// Jobs is how many jobs the destination holds now; -1 when not counted.
	Jobs       int
	Collisions []Collision
	// Unchecked says why ids were not compared ("" when they were).
	Unchecked string
	// Err is why the check could not be made, or the destination cannot be used.
	Err error
}

// Fact is one finding; a Warn is a risk to jobs or a step the run cannot take.
type Fact struct {
	Warn bool
	Text string
}

// Collision is a source job whose id a destination job holds: it will get a fresh id.
type Collision struct{ Source, Dest JobRef }

func (c *DestCheck) ok(format string, args ...any) {
	c.Facts = append(c.Facts, Fact{Text: fmt.Sprintf(format, args...)})
}

func (c *DestCheck) warn(format string, args ...any) {
	c.Facts = append(c.Facts, Fact{Warn: true, Text: fmt.Sprintf(format, args...)})
}

// Warnings counts the warnings.
func (c *DestCheck) Warnings() int {
	n := 0
	for _, f := range c.Facts {
		if f.Warn {
			n++
		}
	}
	return n
}

// CheckDestination looks at --to without moving anything: beanstalk:// is asked for stats, a
// binlog directory is read under its lock, Redis is asked for its version and persistence and
// eviction settings, PostgreSQL for its version, the schema and the privileges a run needs;
// a store's jobs are then compared with the source's by id. A Redis store is opened as a gateway
// opens it (its function library loaded); a PostgreSQL schema is never created or migrated.
// The error wraps ErrUnreachable when the destination cannot be reached (binlog.ErrLocked when a
// server holds the directory); the check made so far is returned with it.
func CheckDestination(ctx context.Context, to, name string, src Source) (*DestCheck, error) {
	c := &DestCheck{Destination: name, Jobs: -1}
	var err error
	switch {
	case IsBeanstalkURL(to):
		err = c.beanstalk(ctx, to)
	case strings.HasPrefix(to, "binlog:"):
		err = c.binlogDir(ctx, strings.TrimPrefix(to, "binlog:"), src)
	case strings.HasPrefix(to, "redis://"), strings.HasPrefix(to, "rediss://"):
		err = c.redis(ctx, to, src)
	case strings.HasPrefix(to, "postgres://"), strings.HasPrefix(to, "postgresql://"):
		err = c.postgres(ctx, to, src)
	default:
		err = fmt.Errorf("--to: want binlog:DIR, redis://…, postgres://…, beanstalk://HOST:PORT or beanstalks://HOST:PORT")
	}
	c.Err = err
	return c, err
}

func unreachableErr(err error) error { return fmt.Errorf("%w: %w", ErrUnreachable, err) }

func (c *DestCheck) beanstalk(ctx context.Context, url string) error {
	dctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cn, _, err := dialBeanstalkURL(dctx, url)
	if errors.Is(err, ErrBadURL) {
		return err
	}
	if err != nil {
		return unreachableErr(err)
	}
	defer cn.Close()
	_ = cn.SetDeadline(time.Now().Add(checkTimeout))
	m, err := cn.Stats()
	if err != nil {
		return unreachableErr(err)
	}
	c.ok("reachable: a beanstalk server, version %s, %d jobs", m.String("version"), m.Uint("current-jobs-ready")+m.Uint("current-jobs-reserved")+m.Uint("current-jobs-delayed")+m.Uint("current-jobs-buried"))
	c.warn("a beanstalk server gives every job a new id and keeps no counters or age, and there is no import record: a crash between a put and the source's delete leaves that batch in both places")
	c.Unchecked = "ids always change at a beanstalk server"
	return nil
}

func (c *DestCheck) binlogDir(ctx context.Context, dir string, src Source) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, os.ErrNotExist) {
		c.ok("%s does not exist yet: the run creates it", abs)
		c.Jobs = 0
		return nil
	}
	if err != nil {
		return unreachableErr(err)
	}
	if !fi.IsDir() {
		return unreachableErr(fmt.Errorf("%s is not a directory", abs))
	}
	rp, err := binlog.ReadLocked(abs, binlog.ReadOptions{})
	if err != nil {
		return err // binlog.ErrLocked: a server runs on it
	}
	defer rp.Close()
	c.ok("reachable: %s, a binlog directory no server holds, %d files", abs, len(rp.Files))
	dest := make([]JobRef, 0, len(rp.Jobs))
	for _, j := range rp.Jobs {
		dest = append(dest, JobRef{ID: j.ID, Tube: j.Tube, State: binlogState(j.State)})
	}
	return c.collide(ctx, src, dest)
}

func (c *DestCheck) redis(ctx context.Context, to string, src Source) error {
	o, err := beanredis.ParseURL(to)
	if err != nil {
		return err
	}
	prefix := o.Prefix
	if prefix == "" {
		prefix = beanredis.DefaultPrefix
	}
	// One attempt, no retries, and go-redis's own log lines (dial failures) silenced: the check
	// says what failed, once.
	goredis.SetLogger(quietLog{})
	var client goredis.UniversalClient
	if o.Cluster {
		co, err := goredis.ParseClusterURL(o.URL)
		if err != nil {
			return err
		}
		co.MaxRetries, co.DialerRetries = -1, 1
		client = goredis.NewClusterClient(co)
	} else {
		ro, err := goredis.ParseURL(o.URL)
		if err != nil {
			return err
		}
		ro.MaxRetries, ro.DialerRetries = -1, 1
		client = goredis.NewClient(ro)
	}
	defer client.Close()
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := client.Ping(cctx).Err(); err != nil {
		return unreachableErr(err)
	}
	// The settings that matter are those of the server holding the namespace's slot.
	server := client
	if cc, ok := client.(*goredis.ClusterClient); ok {
		m, err := cc.MasterForKey(cctx, "{"+prefix+"}")
		if err != nil {
			return unreachableErr(err)
		}
		server = m
	}
	// A user limited to what a gateway needs (docs/redis.md) may not run INFO or CONFIG: the
	// check then says what it could not see.
	inf := map[string]string{}
	if info, err := server.Info(cctx, "server", "persistence", "memory").Result(); err == nil {
		inf = infoMap(info)
	}
	if version := inf["redis_version"]; version != "" {
		var major int
		fmt.Sscanf(version, "%d", &major)
		if major < 7 {
			return fmt.Errorf("redis %s: beangate needs Redis 7.0 or later (Redis Functions)", version)
		}
		c.ok("reachable: Redis %s, namespace {%s}", version, prefix)
	} else {
		c.ok("reachable: Redis (version unknown: INFO refused), namespace {%s}", prefix)
	}
	c.redisSettings(cctx, server, inf)

	o.Client, o.Logger = client, slog.New(slog.DiscardHandler)
	b, err := beanredis.New(ctx, o)
	if err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	defer b.Close()
	return c.store(ctx, b, src)
}

// redisSettings judges persistence and eviction: CONFIG GET, or INFO where CONFIG is disabled
// (managed Redis).
func (c *DestCheck) redisSettings(ctx context.Context, server goredis.UniversalClient, inf map[string]string) {
	cmd := goredis.NewMapStringStringCmd(ctx, "config", "get", "maxmemory-policy", "appendonly", "appendfsync", "save")
	_ = server.Process(ctx, cmd)
	cfg, err := cmd.Result()
	if err != nil {
		cfg = map[string]string{"maxmemory-policy": inf["maxmemory_policy"]}
		switch inf["aof_enabled"] {
		case "1":
			cfg["appendonly"] = "yes"
		case "0":
			cfg["appendonly"] = "no"
		}
	}
	switch p := cfg["maxmemory-policy"]; p {
	case "noeviction":
		c.ok("maxmemory-policy noeviction: Redis refuses writes when full rather than dropping keys")
	case "":
		c.warn("maxmemory-policy unknown (CONFIG GET and INFO refused): make sure it is noeviction, or Redis may drop jobs when full")
	default:
		c.warn("maxmemory-policy is %s, not noeviction: when full, Redis evicts keys, which silently drops jobs (CONFIG SET maxmemory-policy noeviction)", p)
	}
	switch a, f := cfg["appendonly"], cfg["appendfsync"]; {
	case a == "yes" && f == "always":
		c.ok("AOF on, appendfsync always: no acknowledged job is lost in a crash")
	case a == "yes" && f == "no":
		c.warn("AOF on, but appendfsync no: a host crash may lose acknowledged jobs (appendfsync everysec or always)")
	case a == "yes":
		c.ok("AOF on, appendfsync %s: a crash loses at most the last second of jobs", orUnknown(f))
	case a == "no":
		save := cfg["save"]
		if save == "" {
			c.warn("AOF off and no RDB snapshots (save \"\"): a Redis restart loses every job (CONFIG SET appendonly yes)")
		} else {
			c.warn("AOF off: a Redis restart loses the jobs put since the last RDB snapshot (save %q; CONFIG SET appendonly yes)", save)
		}
	default:
		c.warn("persistence unknown (CONFIG GET and INFO refused): make sure appendonly is yes")
	}
}

type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// infoMap parses INFO's "key:value" lines.
func infoMap(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			m[k] = v
		}
	}
	return m
}

func (c *DestCheck) postgres(ctx context.Context, to string, src Source) error {
	o, err := beanpg.ParseURL(to)
	if err != nil {
		return err
	}
	if o.Schema == "" {
		o.Schema = beanpg.DefaultSchema
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		return err
	}
	cfg.ConnConfig.ConnectTimeout = checkTimeout
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return unreachableErr(err)
	}
	defer pool.Close()
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	// Migrations begin with CREATE SCHEMA IF NOT EXISTS, which PostgreSQL checks against the
	// database's CREATE privilege even when the schema is there: a run (and a gateway) with
	// migrations on needs it.
	var version, user string
	var schemaExists, migrated, canCreate, owner bool
	err = pool.QueryRow(cctx, `SELECT current_setting('server_version'), current_user,
		EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
		to_regclass($2) IS NOT NULL,
		has_database_privilege(current_database(), 'CREATE'),
		COALESCE((SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class WHERE oid = to_regclass($3)), true)`,
		o.Schema, pgx.Identifier{o.Schema, "schema_migrations"}.Sanitize(), pgx.Identifier{o.Schema, "jobs"}.Sanitize(),
	).Scan(&version, &user, &schemaExists, &migrated, &canCreate, &owner)
	if err != nil {
		return unreachableErr(err)
	}
	c.ok("reachable: PostgreSQL %s as %s, schema %s", version, user, o.Schema)
	noCreate := fmt.Errorf("%s lacks CREATE on the database, which migrations need (even for an existing schema): GRANT CREATE ON DATABASE to it, or run `beangate migrate-db` as a role that has it and add migrate=false to this URL (docs/postgresql.md)", user)
	if !migrated {
		what := "schema " + o.Schema + " does not exist yet"
		if schemaExists {
			what = "schema " + o.Schema + " has no beangate tables yet"
		}
		switch {
		case o.SkipMigrate:
			return fmt.Errorf("%s, and the URL says migrate=false: run `beangate migrate-db` first", what)
		case !canCreate:
			return fmt.Errorf("%s, and %w", what, noCreate)
		}
		c.ok("%s: the run creates it (its migrations, as a gateway's start does)", what)
		c.Jobs = 0
		return nil
	}
	if !o.SkipMigrate && !canCreate {
		return noCreate
	}
	if !owner && o.VacuumInterval >= 0 {
		c.warn("%s does not own the tables, so the gateways' own VACUUM of the queue tables is skipped: add vacuum_interval=-1s and let a tuned autovacuum do it, or connect as the owner (docs/postgresql.md)", user)
	}
	o.Pool, o.SkipMigrate, o.VacuumInterval, o.Logger = pool, true, -1, slog.New(slog.DiscardHandler)
	b, err := beanpg.New(ctx, o)
	if err != nil {
		// Most likely behind this version's migrations, which the run applies first.
		c.ok("the schema is not at this version's migrations (%v): the run applies them first", err)
		c.Unchecked = "the schema must be migrated before its jobs can be read"
		return nil
	}
	defer b.Close()
	return c.store(ctx, b, src)
}

// store compares a beangate store's jobs with the source's.
func (c *DestCheck) store(ctx context.Context, b backend.Backend, src Source) error {
	var dest []JobRef
	tubes, err := b.ListTubes(ctx)
	if err != nil {
		return fmt.Errorf("listing tubes: %w", err)
	}
	for _, t := range tubes {
		for _, st := range []backend.State{backend.Ready, backend.Reserved, backend.Delayed, backend.Buried} {
			p := backend.ListParams{Tube: t, State: st, Limit: backend.MaxListLimit}
			for {
				page, err := b.ListJobs(ctx, p)
				if errors.Is(err, backend.ErrNotFound) {
					break // the tube went meanwhile
				}
				if err != nil {
					return fmt.Errorf("listing %s jobs of %s: %w", st, t, err)
				}
				for _, j := range page.Jobs {
					dest = append(dest, JobRef{ID: j.ID, Tube: j.Tube, State: j.State.String()})
				}
				if page.Next == "" || len(dest) >= scanBudget {
					break
				}
				p.After = page.Next
			}
		}
	}
	if len(dest) >= scanBudget {
		c.warn("the store holds more than %d jobs: only those were compared with the source's ids", scanBudget)
	}
	return c.collide(ctx, src, dest)
}

// collide finds the source's jobs (in the tubes moved) whose ids dest holds.
func (c *DestCheck) collide(ctx context.Context, src Source, dest []JobRef) error {
	c.Jobs = len(dest)
	byID := make(map[uint64]JobRef, len(dest))
	ids := make([]uint64, 0, len(dest))
	for _, j := range dest {
		byID[j.ID] = j
		ids = append(ids, j.ID)
	}
	slices.Sort(ids)
	found, err := src.Lookup(ctx, ids)
	if err != nil {
		return fmt.Errorf("looking the destination's ids up at the source: %w", err)
	}
	for _, s := range found {
		c.Collisions = append(c.Collisions, Collision{Source: s, Dest: byID[s.ID]})
	}
	return nil
}

// Print writes the check.
func (c *DestCheck) Print(w io.Writer) {
	fmt.Fprintf(w, "destination %s:\n", c.Destination)
	for _, f := range c.Facts {
		label := "ok:     "
		if f.Warn {
			label = "WARNING:"
		}
		fmt.Fprintf(w, "  %s %s\n", label, f.Text)
	}
	if c.Err != nil {
		fmt.Fprintf(w, "  FAILED:  %v\n", c.Err)
		return
	}
	if c.Jobs >= 0 {
		fmt.Fprintf(w, "  jobs:    %d there now\n", c.Jobs)
	}
	switch {
	case c.Unchecked != "":
		fmt.Fprintf(w, "  ids:     not compared: %s\n", c.Unchecked)
	case c.Jobs < 0:
	case len(c.Collisions) == 0:
		fmt.Fprintf(w, "  ids:     no collision: every job keeps its id\n")
	default:
		fmt.Fprintf(w, "  ids:     %s whose ids the destination holds already will get new ids (a job an interrupted run imported counts too, and is skipped rather than doubled):\n", plural(uint64(len(c.Collisions)), "source job"))
		for i, x := range c.Collisions {
			if i == maxNamed {
				fmt.Fprintf(w, "    and %d more\n", len(c.Collisions)-maxNamed)
				break
			}
			fmt.Fprintf(w, "    id %d: at the source tube %s (%s), at the destination tube %s (%s)\n", x.Source.ID, x.Source.Tube, x.Source.State, x.Dest.Tube, x.Dest.State)
		}
	}
}
