package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// dial makes the Backend's own client of opts.URL: a *goredis.ClusterClient with
// opts.Cluster, else a *goredis.Client. Every command the Backend sends works on either: all
// the keys of a namespace share one hash tag, so each FCALL (routed by its first key, the
// stats hash) and each pipeline goes whole to the master of the namespace's slot, and a
// MOVED or ASK reply (a resharding, a failover) is followed by the ClusterClient.
func dial(opts Options) (goredis.UniversalClient, error) {
	if opts.Sentinel {
		return dialSentinel(opts)
	}
	if !opts.Cluster {
		ro, err := goredis.ParseURL(opts.URL)
		if err != nil {
			return nil, opErr("URL", err)
		}
		ro.ReadTimeout, ro.WriteTimeout = opts.CommandTimeout, opts.CommandTimeout
		ro.DialTimeout, ro.PoolTimeout = opts.CommandTimeout, opts.CommandTimeout
		ro.MaxRetries = -1 // a state change must not be applied twice
		ro.ContextTimeoutEnabled = true
		// RESP2: with RESP3 go-redis peeks the socket for push notifications before every
		// command, one more syscall per round trip; nothing here uses RESP3.
		ro.Protocol = 2
		ro.Dialer = rawDialer(ro.DialTimeout, ro.TLSConfig)
		return goredis.NewClient(ro), nil
	}
	co, err := clusterURLOptions(opts.URL)
	if err != nil {
		return nil, err
	}
	co.ReadTimeout, co.WriteTimeout = opts.CommandTimeout, opts.CommandTimeout
	co.DialTimeout, co.PoolTimeout = opts.CommandTimeout, opts.CommandTimeout
	// MaxRetries is each node's; the ClusterClient's own loop (MaxRedirects) still follows
	// MOVED/ASK, which the server answers without running the command, and also retries
	// network errors, which the batches' FCALLs opt out of (onceCmd).
	co.MaxRetries = -1
	co.ContextTimeoutEnabled = true
	co.Protocol = 2 // as above
	co.Dialer = rawDialer(co.DialTimeout, co.TLSConfig)
	return goredis.NewClusterClient(co), nil
}

// slotClient is the client of the server that holds the namespace: for a cluster, the master
// of its slot, for the commands that are not about a key (CONFIG GET, PING) and would
// otherwise go to an arbitrary node, or to all.
func (b *Backend) slotClient(ctx context.Context) (goredis.UniversalClient, error) {
	cc, ok := b.client.(*goredis.ClusterClient)
	if !ok {
		return b.client, nil
	}
	c, err := cc.MasterForKey(ctx, b.keys[0])
	if err != nil {
		return nil, opErr("finding the master of the namespace's slot", err)
	}
	return c, nil
}

// onceCmd is a command go-redis must not send twice: a ClusterClient retries a command whose
// connection failed (EOF, a timeout) whatever MaxRetries says, and a state change that was
// applied before the connection broke would be applied again. MOVED and ASK, which mean the
// command did not run, are still followed.
type onceCmd struct{ *goredis.Cmd }

func (onceCmd) NoRetry() bool { return true }

// fcallCmd is FCALL fn with keys and args, routed by its first key as go-redis's own FCall.
func fcallCmd(ctx context.Context, fn string, keys []string, args ...any) *goredis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "fcall", fn, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := goredis.NewCmd(ctx, cmdArgs...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return cmd
}
