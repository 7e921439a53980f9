package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/beangate/beangate/backend"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of Options.
const (
	DefaultSchema         = "beangate"
	DefaultCommandTimeout = 5 * time.Second
	DefaultLeaseTTL       = 5 * time.Second
	DefaultVacuumInterval = 10 * time.Second
)

// Options configure a Backend. Zero values take the defaults.
type Options struct {
	// DSN is a postgres:// URL or key=value string; ignored when Pool is set.
	DSN string
	// Pool is an existing pool to use instead of opening one; Close leaves it open.
	Pool *pgxpool.Pool
	// Schema holds the tables (default "beangate").
	Schema string
	// Clock injects time for tests; nil means the database's now(), so that every gateway agrees.
	Clock backend.Clock
	// CommandTimeout bounds every database round trip (default 5s); a call running over fails
	// with an infrastructure error.
	CommandTimeout time.Duration
	// LeaseTTL is how long a gateway process stays alive without renewing its heartbeat (default
	// 5s); renewal happens every LeaseTTL/3.
	LeaseTTL time.Duration
	// VacuumInterval is how often one of the gateways vacuums the queue tables (default 10s;
	// negative: never, leaving it to autovacuum).
	VacuumInterval time.Duration
	// SkipMigrate leaves the schema alone at start-up (for teams that run `beangate migrate-db`
	// themselves); New then only checks that every migration it needs is applied, and fails
	// otherwise. Migrations run by default.
	SkipMigrate bool
	// MaxJobSize is the gateway's -z, recorded in the schema at start-up as the body limit of
	// the SQL put (docs/postgresql.md); 0 leaves the recorded one (65535 until a gateway sets it).
	MaxJobSize int
	// Logger receives background failures (listener, heartbeats); nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.VacuumInterval == 0 {
		o.VacuumInterval = DefaultVacuumInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// ParseURL turns a backend URL into Options. Besides everything pgx understands it accepts, and
// removes before connecting, the query parameters schema, command_timeout, lease_ttl and
// vacuum_interval (Go durations) and migrate (false: SkipMigrate), e.g.
// postgres://u@host/db?schema=queue&lease_ttl=3s. Its errors are backend.ErrBadOptions.
func ParseURL(raw string) (Options, error) {
	o, err := parseURL(raw)
	return o, backend.BadOptions(err)
}

func parseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, errors.New("postgres: URL: not a valid URL") // url.Parse's error would quote the password
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return Options{}, fmt.Errorf("postgres: URL: scheme %q is not postgres", u.Scheme)
	}
	q := u.Query()
	var o Options
	o.Schema = q.Get("schema")
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"command_timeout", &o.CommandTimeout}, {"lease_ttl", &o.LeaseTTL}, {"vacuum_interval", &o.VacuumInterval}} {
		if v := q.Get(d.key); v != "" {
			if *d.dst, err = time.ParseDuration(v); err != nil {
				return Options{}, fmt.Errorf("postgres: URL: %s: %w", d.key, err)
			}
		}
	}
	if v := q.Get("migrate"); v != "" {
		m, err := strconv.ParseBool(v)
		if err != nil {
			return Options{}, fmt.Errorf("postgres: URL: migrate: %w", err)
		}
		o.SkipMigrate = !m
	}
	for _, k := range []string{"schema", "command_timeout", "lease_ttl", "vacuum_interval", "migrate"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	o.DSN = u.String()
	return o, nil
}
