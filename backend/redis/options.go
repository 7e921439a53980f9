package redis

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
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
	DefaultWaitTimeout    = time.Second
)

// Options configure a Backend.
type Options struct {
	// URL is a go-redis URL (redis://[user:pass@]host:port/db); ignored when Client is set.
	// With Cluster it is a go-redis cluster URL: redis://host:port?addr=host2:port2&addr=…
	// (any one reachable node will do; the others are found from it), whose DB must be 0.
	URL string
	// Cluster makes New dial URL as a Redis Cluster.
	Cluster bool
	// Sentinel makes New dial URL as go-redis's failover URL: its host:port and each addr=
	// parameter name a sentinel, master_name= the master they monitor, and the Backend follows
	// that master through failovers. Set by ParseURL when the URL has master_name.
	Sentinel bool
	// Client is an existing client (a *goredis.Client, or a *goredis.ClusterClient for a
	// Redis Cluster) to use instead of dialling URL; Close leaves it open.
	Client goredis.UniversalClient
	// Prefix names the namespace: every key is "{Prefix}:…", one hash tag, so a namespace lives
	// in one Cluster slot and several queues can share one Redis. It may not contain '{' or '}'.
	Prefix string
	// Clock: nil reads the Redis server's TIME inside each script, so gateways agree without
	// host clock sync; tests inject a fake clock (internal/clocktest), whose Now is passed to the scripts.
	Clock backend.Clock
	// CommandTimeout bounds each Redis call; running over returns an error (INTERNAL_ERROR).
	CommandTimeout time.Duration
	// LeaseTTL is the life of a gateway process's heartbeat key. A process whose lease expires
	// is taken for dead and its sessions are ended by any other Backend on the namespace, once
	// the lease has stayed missing for a grace of LeaseTTL/2: within 2.5 × LeaseTTL of its death.
	LeaseTTL time.Duration
	// WaitReplicas, when positive, makes every state change a client is told of (put, delete,
	// release, bury, touch, kick, pause, the admin writes) wait until that many replicas have it
	// (Redis WAIT, one per batch) before its reply; a change they do not all acknowledge within
	// WaitTimeout fails (INTERNAL_ERROR), though it is applied on the master. See wait.go.
	WaitReplicas int
	// WaitTimeout bounds that wait (DefaultWaitTimeout if zero); at least a millisecond (WAIT
	// counts milliseconds, and 0 would wait for ever) and shorter than CommandTimeout.
	WaitTimeout time.Duration
	// Layout is how a namespace's keys are laid out: "" (LayoutOneSlot) keeps every key in one
	// slot, LayoutSpread spreads the tubes over the masters of a Redis Cluster (Cluster only;
	// docs/redis-cluster.md). A namespace records its layout when it is made, and New refuses a
	// namespace recorded with the other one (layout.go).
	Layout string
	// Shards is how many buckets each tube of the spread layout puts into (1 if zero), each on
	// another master where the cluster has them. A tube policy's shards overrides it.
	Shards int
	// Logger: nil discards.
	Logger *slog.Logger
}

// Layouts of Options.Layout.
const (
	LayoutOneSlot = ""
	LayoutSpread  = "spread"
	// maxShards bounds Options.Shards: a reserve of a sharded tube reads every shard.
	maxShards = 64
)

func (o Options) withDefaults() (Options, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		return o, fmt.Errorf("redis: options: prefix %q may not contain '{' or '}'", o.Prefix)
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
	switch {
	case o.WaitReplicas < 0:
		return o, fmt.Errorf("redis: options: wait_replicas %d is negative", o.WaitReplicas)
	case o.WaitReplicas == 0 && o.WaitTimeout != 0:
		return o, errors.New("redis: options: wait_timeout needs wait_replicas")
	case o.WaitReplicas > 0 && o.WaitTimeout == 0:
		o.WaitTimeout = DefaultWaitTimeout
	}
	if o.WaitTimeout != 0 && o.WaitTimeout < time.Millisecond {
		return o, fmt.Errorf("redis: options: wait_timeout %v is under 1ms (WAIT counts whole milliseconds)", o.WaitTimeout)
	}
	if o.WaitTimeout >= o.CommandTimeout {
		return o, fmt.Errorf("redis: options: wait_timeout %v is not shorter than the command timeout %v", o.WaitTimeout, o.CommandTimeout)
	}
	if o.Client == nil && o.URL == "" {
		return o, errors.New("redis: options: neither URL nor Client given")
	}
	switch {
	case o.Layout != LayoutOneSlot && o.Layout != LayoutSpread:
		return o, fmt.Errorf("redis: options: layout %q is not spread (or empty, for one slot)", o.Layout)
	case o.Layout == LayoutSpread && !o.Cluster && o.Client == nil:
		return o, errors.New("redis: options: layout=spread needs a Redis Cluster (cluster=true)")
	case o.Layout == LayoutSpread && o.Client != nil:
		if _, ok := o.Client.(*goredis.ClusterClient); !ok {
			return o, errors.New("redis: options: layout=spread needs a Redis Cluster client")
		}
	case o.Shards != 0 && o.Layout != LayoutSpread:
		return o, errors.New("redis: options: shards needs layout=spread")
	case o.Shards < 0 || o.Shards > maxShards:
		return o, fmt.Errorf("redis: options: shards %d is not within 1..%d", o.Shards, maxShards)
	}
	if o.Layout == LayoutSpread && o.Shards == 0 {
		o.Shards = 1
	}
	return o, nil
}

// errBadURL: url.Parse's own error would quote the URL, password and all.
var errBadURL = errors.New("redis: URL: not a valid URL")

// ParseURL turns "redis://host:port/db?prefix=…&timeout=…&lease=…" (also rediss://) into
// Options. prefix, timeout (CommandTimeout), lease (LeaseTTL), wait_replicas and wait_timeout
// (WaitReplicas, WaitTimeout), cluster, layout and shards (Layout, Shards: spread=layout and
// shards=N need cluster=true) are ours; every
// other query parameter is left for go-redis's own URL options. cluster=true names a Redis
// Cluster: host:port is one node, more may follow as go-redis's addr=host:port parameters
// (seeds in case the first is down), and the DB is 0 or left out. master_name=NAME names a
// master monitored by Redis Sentinel (go-redis's failover URL): host:port is a sentinel, more
// follow as addr=host:port, the URL's user and password (or sentinel_username= and
// sentinel_password=) are the sentinels', and username= and password= the master's. Its errors
// are backend.ErrBadOptions.
func ParseURL(raw string) (Options, error) {
	o, err := parseURL(raw)
	return o, backend.BadOptions(err)
}

func parseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, errBadURL
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return Options{}, fmt.Errorf("redis: URL: scheme %q is not redis or rediss", u.Scheme)
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
				return Options{}, fmt.Errorf("redis: URL: %s=%q is not a positive duration", d.name, v)
			}
		}
		q.Del(d.name)
	}
	if v := q.Get("wait_replicas"); v != "" {
		if o.WaitReplicas, err = strconv.Atoi(v); err != nil || o.WaitReplicas < 0 {
			return Options{}, fmt.Errorf("redis: URL: wait_replicas=%q is not a whole number of replicas (0 or more)", v)
		}
	}
	if v := q.Get("wait_timeout"); v != "" {
		if o.WaitTimeout, err = time.ParseDuration(v); err != nil || o.WaitTimeout <= 0 {
			return Options{}, fmt.Errorf("redis: URL: wait_timeout=%q is not a positive duration", v)
		}
	}
	q.Del("wait_replicas")
	q.Del("wait_timeout")
	if v := q.Get("cluster"); v != "" {
		if o.Cluster, err = strconv.ParseBool(v); err != nil {
			return Options{}, fmt.Errorf("redis: URL: cluster=%q is not true or false", v)
		}
	}
	o.Layout = q.Get("layout")
	if v := q.Get("shards"); v != "" {
		if o.Shards, err = strconv.Atoi(v); err != nil || o.Shards < 1 {
			return Options{}, fmt.Errorf("redis: URL: shards=%q is not a whole number of shards (1 or more)", v)
		}
	}
	q.Del("prefix")
	q.Del("cluster")
	q.Del("layout")
	q.Del("shards")
	if su, sp := q.Get("sentinel_username"), q.Get("sentinel_password"); su != "" || sp != "" {
		// go-redis takes the sentinels' credentials from the URL's user only.
		if u.User != nil || q.Get("master_name") == "" {
			return Options{}, errors.New("redis: URL: sentinel_username/sentinel_password need master_name= and no user in the URL")
		}
		u.User = url.UserPassword(su, sp)
		if sp == "" {
			u.User = url.User(su)
		}
		q.Del("sentinel_username")
		q.Del("sentinel_password")
	}
	u.RawQuery = q.Encode()
	o.URL = u.String()
	o.Sentinel = q.Get("master_name") != ""
	switch {
	case o.Cluster && o.Sentinel:
		err = errors.New("redis: URL: master_name= (Sentinel) and cluster=true do not go together")
	case o.Cluster:
		_, err = clusterURLOptions(o.URL)
	case o.Sentinel:
		if _, err = goredis.ParseFailoverURL(o.URL); err != nil {
			err = opErr("URL", err)
		}
	case len(q["addr"]) > 0:
		err = errors.New("redis: URL: addr= names more nodes of a Redis Cluster (add cluster=true) or more sentinels (add master_name=)")
	default:
		if _, err = goredis.ParseURL(o.URL); err != nil {
			err = opErr("URL", err)
		}
	}
	if err != nil {
		return Options{}, err
	}
	if _, err := o.withDefaults(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// clusterURLOptions parses a cluster URL. go-redis ignores the URL's path, but a DB other than
// 0 there is a mistake that must not go unnoticed: a Redis Cluster has only DB 0.
func clusterURLOptions(raw string) (*goredis.ClusterOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errBadURL
	}
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		return nil, fmt.Errorf("redis: URL: DB %q in a cluster URL: a Redis Cluster has only DB 0", db)
	}
	co, err := goredis.ParseClusterURL(raw)
	if err != nil {
		return nil, opErr("URL", err)
	}
	return co, nil
}
