package main

import (
	"cmp"
	"net/url"
	"strings"

	beanpg "github.com/beangate/beangate/backend/postgres"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/configs"
)

// storeNamespace says where in the store this gateway's jobs are, for the console's header:
// Redis's key prefix, PostgreSQL's schema, the memory store's binlog directory.
func storeNamespace(cfg configs.Config) string {
	u, err := url.Parse(cfg.Backend)
	if err != nil {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "redis", "rediss":
		return "prefix " + cmp.Or(u.Query().Get("prefix"), beanredis.DefaultPrefix)
	case "postgres", "postgresql":
		return "schema " + cmp.Or(u.Query().Get("schema"), beanpg.DefaultSchema)
	case "memory":
		if cfg.Binlog.Dir != "" {
			return "binlog " + cfg.Binlog.Dir
		}
		return "no binlog"
	}
	return ""
}

// storeAddress is the store's URL without its user, password or query (where a password may
// also be given): fit to show to whoever may read the console.
func storeAddress(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
