package redis

import (
	goredis "github.com/redis/go-redis/v9"
)

// dialSentinel makes a client of the master the URL's sentinels name (go-redis's failover
// client). It asks the sentinels for the master's address whenever it dials, listens to them
// for +switch-master and then closes its connections to the old master, so the Backend follows
// a failover by itself:
//   - while there is no master (the old one is dead, no replica promoted yet) every dial fails
//     at once and each call answers INTERNAL_ERROR, none waits for the failover;
//   - a master that lacks the library is given it by the first call that finds it missing
//     (execBatch), though a replica has its master's functions already;
//   - the subscription is made again on the new master, which wakes every waiting reserve and
//     restores the id floor and the leases at once (notify.go, lease.go): a promoted replica
//     that lagged may have lost the last ids and lease renewals;
//   - sessions live in the store: those the new master lacks come back with their next
//     commands (lua/lib.lua).
//
// A replica lagging at the failover loses the writes it had not received: asynchronous
// replication acknowledges before the replica has them.
func dialSentinel(opts Options) (goredis.UniversalClient, error) {
	fo, err := goredis.ParseFailoverURL(opts.URL)
	if err != nil {
		return nil, opErr("URL", err)
	}
	fo.ReadTimeout, fo.WriteTimeout = opts.CommandTimeout, opts.CommandTimeout
	fo.DialTimeout, fo.PoolTimeout = opts.CommandTimeout, opts.CommandTimeout
	fo.MaxRetries = -1 // a state change must not be applied twice
	fo.ContextTimeoutEnabled = true
	fo.Protocol = 2 // as in dial
	if fo.TLSConfig != nil {
		// go-redis names the first sentinel as the server of every connection; each must be
		// verified against the host it dials, the master's included.
		fo.TLSConfig.ServerName = ""
	}
	fo.Dialer = rawDialer(fo.DialTimeout, fo.TLSConfig)
	return goredis.NewFailoverClient(fo), nil
}
