package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Calls over several slots (the spread layout, docs/redis-cluster.md: each bucket of a namespace
// in a slot of its own) go out as one pipeline per master, the masters' pipelines concurrently,
// each call routed by its first key. runSlotCalls is the one place that sends them and follows
// what a cluster answers when a call did not run:
//
//   - MOVED (the slot has another master now: a failover, a resharding done): sent again to the
//     master named, and the client's slot map is reloaded;
//   - ASK (the slot is being migrated and the call's key is already on the target): sent again
//     to the target, preceded by ASKING;
//   - TRYAGAIN (a call of several keys whose slot is being migrated, some of its keys already
//     gone): sent again after a short wait, doubled each round, to the master of the slot then;
//   - "function not found" (a master new since the library was loaded: promoted by a failover,
//     or given slots by a resharding; or one whose functions were flushed): the library is loaded
//     on that node and the call sent again, once.
//
// All of these replies mean the call did not run, so sending it again cannot apply it twice. A
// connection that fails or times out may have run it: such a call is never sent again (onceCmd),
// its error is its reply, and the slot map is reloaded for the next calls.
//
// With Options.WaitReplicas each master's pipeline that holds a call that waits (a state change
// a client is told of, wait.go) ends with one WAIT on the same connection, which covers the
// writes of that pipeline: one WAIT per master per round, never one per call, and never a WAIT
// on a master that ran nothing of the batch.

// slotCall is one FCALL (fcallCmd) routed by key, the first key it declares.
type slotCall struct {
	key  string
	cmd  *goredis.Cmd
	wait bool // its reply waits for the replicas (Options.WaitReplicas): see wait.go
}

const (
	// maxSlotRounds bounds how many times one call is sent: each round follows one redirect or
	// waits once after TRYAGAIN.
	maxSlotRounds = 10
	// tryAgainWait is the first wait after TRYAGAIN, doubled each round up to maxTryAgainWait:
	// redis-cli moves a slot's keys in batches of some tens, each within milliseconds.
	tryAgainWait    = 5 * time.Millisecond
	maxTryAgainWait = 250 * time.Millisecond
)

// slotRoute is where a call goes in a round: a node named by a redirect (addr, with ASKING for
// ASK), else the master of its key's slot.
type slotRoute struct {
	addr string
	ask  bool
}

// nodeBatch is one node's part of a round.
type nodeBatch struct {
	node  *goredis.Client
	calls []int
}

// runSlotCalls sends calls and leaves each one's reply (or error) in its cmd. It returns, by
// call, the error of the WAIT that covered it when that WAIT found fewer replicas than asked
// for (errNotReplicated), for the calls that wait and ran; nil elsewhere. A client that is not
// a cluster's sends everything in one pipeline, as the single-slot layout does.
func (b *Backend) runSlotCalls(ctx context.Context, calls []slotCall) []error {
	werrs := make([]error, len(calls))
	cc, ok := b.client.(*goredis.ClusterClient)
	if !ok {
		all := make([]int, len(calls))
		for i := range all {
			all[i] = i
		}
		b.sendNodeBatch(ctx, b.client, calls, all, nil, werrs)
		return werrs
	}
	routes := make([]slotRoute, len(calls))
	reloaded := make([]bool, len(calls)) // the library was loaded for it once already
	pending := make([]int, len(calls))
	for i := range pending {
		pending[i] = i
	}
	wait := tryAgainWait
	for round := 1; len(pending) > 0; round++ {
		batches := b.groupByNode(ctx, cc, calls, routes, pending)
		var wg sync.WaitGroup
		for _, nb := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.sendNodeBatch(ctx, nb.node, calls, nb.calls, routes, werrs)
			}()
		}
		wg.Wait()

		var next []int
		var tryAgain, reload bool
		load := map[*goredis.Client][]int{}
		for _, nb := range batches {
			for _, i := range nb.calls {
				err := calls[i].cmd.Err()
				routes[i] = slotRoute{}
				switch {
				case err == nil || errors.Is(err, goredis.Nil):
				case isRedirect(err, "MOVED"):
					routes[i] = slotRoute{addr: redirectAddr(err)}
					reload = true
					next = append(next, i)
				case isRedirect(err, "ASK"):
					routes[i] = slotRoute{addr: redirectAddr(err), ask: true}
					next = append(next, i)
				case goredis.IsTryAgainError(err):
					tryAgain = true
					next = append(next, i)
				case isFunctionNotFound(err) && !reloaded[i]:
					reloaded[i] = true
					load[nb.node] = append(load[nb.node], i)
				case !isReply(err):
					reload = true // a node unreachable: a failover may be under way
				}
			}
		}
		if reload {
			cc.ReloadState(ctx)
		}
		for node, is := range load {
			if err := node.FunctionLoadReplace(ctx, b.sc.code).Err(); err != nil {
				for _, i := range is {
					calls[i].cmd.SetErr(fmt.Errorf("loading function library %s on %s: %w", b.sc.lib, node.Options().Addr, err))
				}
				continue
			}
			next = append(next, is...)
		}
		if len(next) == 0 || round == maxSlotRounds {
			return werrs
		}
		if tryAgain {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return werrs
			case <-t.C:
			}
			wait = min(2*wait, maxTryAgainWait)
		}
		pending = next
	}
	return werrs
}

// groupByNode gives each pending call its node for this round. A call whose node cannot be
// found gets that error as its reply.
func (b *Backend) groupByNode(ctx context.Context, cc *goredis.ClusterClient, calls []slotCall, routes []slotRoute, pending []int) []*nodeBatch {
	byAddr := map[string]*nodeBatch{}
	var out []*nodeBatch
	for _, i := range pending {
		var node *goredis.Client
		var err error
		if routes[i].addr != "" {
			node, err = clusterNode(ctx, cc, routes[i].addr)
		}
		if node == nil {
			routes[i] = slotRoute{} // a node the client does not know (yet): the slot's master
			node, err = cc.MasterForKey(ctx, calls[i].key)
		}
		if err != nil {
			calls[i].cmd.SetErr(err)
			continue
		}
		addr := node.Options().Addr
		nb := byAddr[addr]
		if nb == nil {
			nb = &nodeBatch{node: node}
			byAddr[addr] = nb
			out = append(out, nb)
		}
		nb.calls = append(nb.calls, i)
	}
	return out
}

// sendNodeBatch sends calls[is] to node in one pipeline, each at most once, with ASKING before
// those routes say so, and one WAIT at the end if any of them waits.
func (b *Backend) sendNodeBatch(ctx context.Context, node goredis.UniversalClient, calls []slotCall, is []int, routes []slotRoute, werrs []error) {
	pipe := node.Pipeline()
	wait := false
	for _, i := range is {
		if routes != nil && routes[i].ask {
			_ = pipe.Process(ctx, goredis.NewStatusCmd(ctx, "asking"))
		}
		calls[i].cmd.SetErr(nil)
		_ = pipe.Process(ctx, onceCmd{calls[i].cmd})
		wait = wait || (calls[i].wait && b.opts.WaitReplicas > 0)
	}
	var w *goredis.IntCmd
	if wait {
		w = goredis.NewIntCmd(ctx, "wait", b.opts.WaitReplicas, b.opts.WaitTimeout.Milliseconds())
		_ = pipe.Process(ctx, w)
	}
	_, _ = pipe.Exec(ctx)
	if w == nil {
		return
	}
	werr := waitShortfall(w, b.opts.WaitReplicas, b.opts.WaitTimeout)
	for _, i := range is {
		if calls[i].wait {
			werrs[i] = werr
		}
	}
}

// clusterNode is the client cc keeps for the node at addr, nil if it knows none there.
func clusterNode(ctx context.Context, cc *goredis.ClusterClient, addr string) (*goredis.Client, error) {
	var mu sync.Mutex
	var found *goredis.Client
	err := cc.ForEachShard(ctx, func(_ context.Context, n *goredis.Client) error {
		if n.Options().Addr == addr {
			mu.Lock()
			found = n
			mu.Unlock()
		}
		return nil
	})
	return found, err
}

// isRedirect tells whether err is a MOVED or ASK reply (code), "CODE slot host:port".
func isRedirect(err error, code string) bool {
	return isReply(err) && strings.HasPrefix(err.Error(), code+" ")
}

// redirectAddr is the host:port of a MOVED or ASK reply.
func redirectAddr(err error) string {
	f := strings.Fields(err.Error())
	return f[len(f)-1]
}

// isReply tells whether err is a reply of the server's (as opposed to a connection's failure).
func isReply(err error) bool {
	var reply goredis.Error
	return errors.As(err, &reply)
}
