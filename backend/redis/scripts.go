package redis

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// luaFiles holds one script per state change, lib.lua and spread_lib.lua (the helpers they
// share) and batch.lua
// (which runs many of them in one call).
//
//go:embed lua/*.lua
var luaFiles embed.FS

// op is an operation: lua/<op>.lua, the name batch.lua knows it by.
type op string

const (
	opSessionBegin  op = "session_begin"
	opSessionEnd    op = "session_end"
	opReap          op = "reap"
	opUse           op = "use"
	opWatch         op = "watch"
	opIgnore        op = "ignore"
	opPut           op = "put"
	opReserve       op = "reserve"
	opReserveJob    op = "reserve_job"
	opReserveHanded op = "reserve_handed"
	opDelete        op = "delete"
	opRelease       op = "release"
	opBury          op = "bury"
	opTouch         op = "touch"
	opKick          op = "kick"
	opKickJob       op = "kick_job"
	opPeek          op = "peek"
	opPeekState     op = "peek_state"
	opJobStats      op = "job_stats"
	opJobHistory    op = "job_history"
	opTubeStats     op = "tube_stats"
	opStats         op = "stats"
	opListTubes     op = "list_tubes"
	opPause         op = "pause"
	opRestore       op = "restore"
	opListJobs      op = "list_jobs"
	opDeleteJobs    op = "delete_jobs"
	opMoveJobs      op = "move_jobs"
	opImport        op = "import"
	opReadyAges     op = "ready_ages"
	opPolicySet     op = "policy_set"
	opPolicyClear   op = "policy_clear"
	opPolicySweep   op = "policy_sweep"
	opScheduleSet   op = "schedule_set"
	opScheduleClear op = "schedule_clear"
	opScheduleList  op = "schedule_list"
	opScheduleFire  op = "schedule_fire"

	// The spread layout's own (docs/redis-cluster.md).
	opReserveSpread op = "reserve_spread"
	opUnuse         op = "unuse"
	opReapDead      op = "reap_dead"
	opReapSessions  op = "reap_sessions"
	opReapForget    op = "reap_forget"
	opForward       op = "forward"
)

// ops are all the operations.
var ops = []op{
	opSessionBegin, opSessionEnd, opReap, opUse, opWatch, opIgnore,
	opPut, opReserve, opReserveJob, opReserveHanded, opDelete, opRelease, opBury, opTouch,
	opKick, opKickJob, opPeek, opPeekState, opJobStats, opJobHistory, opTubeStats,
	opStats, opListTubes, opPause, opRestore, opListJobs, opDeleteJobs, opMoveJobs, opImport,
	opReadyAges, opPolicySet, opPolicyClear, opPolicySweep,
	opScheduleSet, opScheduleClear, opScheduleList, opScheduleFire,
	opReserveSpread, opUnuse, opReapDead, opReapSessions, opReapForget, opForward,
}

// scripts is the Redis Functions library (FUNCTION LOAD) made of lib.lua, every operation and
// batch.lua, and the name of its batch function, through which every operation is called.
//
// Why Functions rather than EVALSHA: a script cannot call another, so lib.lua had to be
// prepended to every script, and Redis re-ran it (redefining ~30 closures) on every call, about
// 10 µs of the ~25 µs a put cost. A library's top level runs once, at load; each call only runs
// its own body.
//
// Why one batch function: Redis spends about as much on an FCALL itself (parsing, dispatch,
// argument conversion) as on a short operation's own commands, and go-redis a command object
// per call; a batch of the calls queued meanwhile pays that once.
//
// Versioning: the library is named beangate_<hash of its text> and every function carries the
// same hash, because function names are global across libraries. Gateways of different
// versions on one Redis thus each use their own library and never replace each other's; an
// old version's library stays loaded (some tens of KiB) until removed with FUNCTION DELETE.
type scripts struct {
	lib   string        // library name
	code  string        // FUNCTION LOAD text
	batch string        // the batch function's name
	fns   map[op]string // each operation's own function's name
}

// loadScripts assembles the library from the embedded sources. Each operation's file becomes
// the body of a function(KEYS, ARGV), so the files read as ordinary scripts; begin (lib.lua)
// sets the per-call context first. Each is registered on its own (a lone call goes straight to
// it) and kept in OPS for batch.lua. A missing file is a build mistake, hence the panic.
func loadScripts() *scripts {
	var body strings.Builder
	body.WriteString(mustRead("lib"))
	body.WriteString(mustRead("spread_lib"))
	// register names each function <library>_<op>. A lone call is a top-level call of its own:
	// it starts with a fresh memo and writes back what it left pending (lib.lua), also when it
	// raises an error (whose writes until then stay, as any script's). Redis's pcall turns a
	// redis.call error into its message, which starts with the error code ("WRONGTYPE ..."):
	// answered as such, as without the pcall; a Lua error is raised again.
	body.WriteString(`
local function register(op, f)
  OPS[op] = f
  redis.register_function(LIB .. '_' .. op, function(KEYS, ARGV)
    memo_reset(false)
    local ok, res = pcall(f, KEYS, ARGV)
    flush()
    if ok then return with_actions(res) end
    if type(res) == 'string' and string.find(res, '^%u+ ') then return redis.error_reply(res) end
    error(res, 0)
  end)
end
`)
	for _, op := range ops {
		fmt.Fprintf(&body, "\nregister('%s', function(KEYS, ARGV)\nbegin(KEYS, ARGV)\n%s\nend)\n", op, mustRead(string(op)))
	}
	fmt.Fprintf(&body, "\nredis.register_function(LIB .. '_batch', function(KEYS, ARGV)\n%s\nend)\n", mustRead("batch"))
	sum := sha1.Sum([]byte(body.String()))
	lib := "beangate_" + hex.EncodeToString(sum[:6])
	code := "#!lua name=" + lib + "\n" +
		"local LIB, OPS = '" + lib + "', {}\n" +
		body.String()
	fns := make(map[op]string, len(ops))
	for _, op := range ops {
		fns[op] = lib + "_" + string(op)
	}
	return &scripts{lib: lib, code: code, batch: lib + "_batch", fns: fns}
}

// load (re)loads the library. REPLACE makes it idempotent: gateways of one version load the
// same text, and a Redis restarted without persistence has forgotten it.
//
// In a Redis Cluster each master keeps its own functions (replicas get their master's), so
// every master gets the library, so that a slot that moves (a failover, a resharding) finds it
// where it lands; the topology is reloaded first, so a master new since is included. Only the
// master of key's slot, the namespace's, must succeed: a master down elsewhere must not stop
// this namespace, and one that lacks the library is given it when a call finds it missing.
func (s *scripts) load(ctx context.Context, c goredis.UniversalClient, key string) error {
	cc, ok := c.(*goredis.ClusterClient)
	if !ok {
		if err := c.FunctionLoadReplace(ctx, s.code).Err(); err != nil {
			return fmt.Errorf("loading function library %s: %w", s.lib, err)
		}
		return nil
	}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error {
		if err := n.FunctionLoadReplace(ctx, s.code).Err(); err != nil {
			return fmt.Errorf("on %s: %w", n.Options().Addr, err)
		}
		return nil
	})
	if err != nil {
		if m, merr := cc.MasterForKey(ctx, key); merr == nil && m.FunctionLoadReplace(ctx, s.code).Err() == nil {
			return nil
		}
		return fmt.Errorf("loading function library %s: %w", s.lib, err)
	}
	return nil
}

// isFunctionNotFound tells whether FCALL failed because the library is not loaded (first use
// on a fresh or restarted Redis, or after FUNCTION FLUSH); the call did not run.
func isFunctionNotFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Function not found")
}

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("redis: embedded script %s: %v", name, err))
	}
	return string(b)
}
