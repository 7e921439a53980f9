package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// With Options.WaitReplicas, a batch holding a state change a client is told of is sent
// pipelined with WAIT (one per batch, in the same round trip, on the same connection, so it
// covers the batch's writes): the replies wait until that many replicas have the batch, and a
// WAIT that answers fewer within WaitTimeout fails every such change of the batch. The change
// stays applied on the master (WAIT cannot undo it): a put so answered may exist, and may or
// may not survive a failover.
//
// Reserves wait too: the gateway and its workers' connections outlive the master, so a
// reservation a failover forgets would hand its job to a second worker while the first holds
// it. Session state (use, watch, ignore, session begin and end), the reaper, the id floor and
// reads do not wait: a forgotten session comes back with its next commands, and a forgotten
// session end leaves jobs whose holder is gone to their TTR. A batch of only those sends no
// WAIT.

// errNotReplicated answers a state change whose WAIT found fewer replicas than asked for.
var errNotReplicated = errors.New("not replicated")

// waits are the operations whose reply waits for the replicas: every change a client is told
// of that a failover must not undo.
var waits = map[op]bool{
	opPut: true, opReserve: true, opReserveJob: true, opReserveHanded: true, opReserveSpread: true, opDelete: true,
	opRelease: true, opBury: true, opTouch: true, opKick: true, opKickJob: true, opPause: true,
	opDeleteJobs: true, opMoveJobs: true, opImport: true, opPolicySet: true, opPolicyClear: true,
}

// mustWait tells whether a batch of calls is sent with WAIT.
func (b *Backend) mustWait(calls []opCall) bool {
	if b.opts.WaitReplicas <= 0 {
		return false
	}
	for _, c := range calls {
		if waits[c.op] {
			return true
		}
	}
	return false
}

// process sends cmd, at most once; with wait, pipelined with WAIT, whose shortfall or failure
// it returns (the caller fails the batch's waiting calls with it, cmd's own reply is still
// read). On a cluster the pair goes to the master of key's slot (cmd's) directly: a
// ClusterClient would send the key-less WAIT to an arbitrary node.
func (b *Backend) process(ctx context.Context, cmd *goredis.Cmd, wait bool, key string) error {
	if !wait {
		_ = b.client.Process(ctx, onceCmd{cmd})
		return nil
	}
	c, cc := b.client, (*goredis.ClusterClient)(nil)
	if cc, _ = b.client.(*goredis.ClusterClient); cc != nil {
		node, err := cc.MasterForKey(ctx, key)
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		c = node
	}
	pipe := c.Pipeline()
	_ = pipe.Process(ctx, onceCmd{cmd})
	w := goredis.NewIntCmd(ctx, "wait", b.opts.WaitReplicas, b.opts.WaitTimeout.Milliseconds())
	_ = pipe.Process(ctx, w)
	_, _ = pipe.Exec(ctx)
	if cc != nil && cmd.Err() != nil && !errors.Is(cmd.Err(), goredis.Nil) {
		cc.ReloadState(ctx) // a failover or a resharding (MOVED): the slot's master may have moved
	}
	return waitShortfall(w, b.opts.WaitReplicas, b.opts.WaitTimeout)
}

// waitShortfall is errNotReplicated when WAIT w failed or found fewer than want replicas.
func waitShortfall(w *goredis.IntCmd, want int, timeout time.Duration) error {
	n, err := w.Result()
	if err != nil {
		return fmt.Errorf("%w: WAIT: %w", errNotReplicated, err)
	}
	if n < int64(want) {
		return fmt.Errorf("%w: %d of %d replicas acknowledged within %v (the change is applied on the master and may be lost in a failover)",
			errNotReplicated, n, want, timeout)
	}
	return nil
}

// failUnreplicated gives err to the replies of the calls that wait, except those that failed
// or found nothing already: they changed nothing, or are told they failed.
func failUnreplicated(calls []opCall, replies []opReply, err error) {
	if err == nil {
		return
	}
	for i, c := range calls {
		if waits[c.op] && replies[i].err == nil {
			replies[i] = opReply{err: err}
		}
	}
}
