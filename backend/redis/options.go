package redis

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/beangate/beangate/backend"
)

// Defaults of Options.
const (
	DefaultPrefix         = "beangate"
	DefaultCommandTimeout = 5 * time.Second
	DefaultLeaseTTL       = 5 * time.Second
)

// Options configure a Backend.
type Options struct {
	// URL is a go-redis URL (redis://[user:pass@]host:port/db); ignored when Client is set.
	URL string
	// Client is an existing client to use instead of dialling URL; Close leaves it open.
	Client *goredis.Client
	// Prefix names the namespace: every key is "{Prefix}:…", one hash tag, so a namespace lives
	// in one Cluster slot and several queues can share one Redis. It may not contain '{' or '}'.
	Prefix string
	// Clock: nil reads the Redis server's TIME inside each script, so gateways agree without
	// host clock sync; tests inject a FakeClock, whose Now is passed to the scripts.
	Clock backend.Clock
	// CommandTimeout bounds each Redis call; running over returns an error (INTERNAL_ERROR).
	CommandTimeout time.Duration
	// LeaseTTL is the life of a gateway process's heartbeat key. A process whose lease expires
	// is taken for dead and its sessions are ended by any other Backend on the namespace.
	LeaseTTL time.Duration
	// Logger: nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		return o, fmt.Errorf("backend/redis: prefix %q may not contain '{' or '}'", o.Prefix)
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Client == nil && o.URL == "" {
		return o, fmt.Errorf("backend/redis: neither URL nor Client given")
	}
	return o, nil
}

// ParseURL turns "redis://host:port/db?prefix=…&timeout=…&lease=…" (also rediss://) into
// Options. prefix, timeout (CommandTimeout) and lease (LeaseTTL) are ours; every other query
// parameter is left for go-redis's own URL options.
func ParseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, fmt.Errorf("backend/redis: %w", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return Options{}, fmt.Errorf("backend/redis: URL scheme %q is not redis or rediss", u.Scheme)
	}
	q := u.Query()
	var o Options
	o.Prefix = q.Get("prefix")
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"timeout", &o.CommandTimeout}, {"lease", &o.LeaseTTL}} {
		if v := q.Get(d.name); v != "" {
			if *d.to, err = time.ParseDuration(v); err != nil || *d.to <= 0 {
				return Options{}, fmt.Errorf("backend/redis: %s=%q is not a positive duration", d.name, v)
			}
		}
		q.Del(d.name)
	}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	o.URL = u.String()
	if _, err := goredis.ParseURL(o.URL); err != nil {
		return Options{}, fmt.Errorf("backend/redis: %w", err)
	}
	if _, err := o.withDefaults(); err != nil {
		return Options{}, err
	}
	return o, nil
}
