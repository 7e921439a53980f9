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

// luaFiles holds one script per state change plus lib.lua, the helpers they share.
//
//go:embed lua/*.lua
var luaFiles embed.FS

// opNames are the operations, one lua/<name>.lua each.
var opNames = []string{
	"session_begin", "session_end", "reap", "use", "watch", "ignore",
	"put", "reserve", "reserve_job", "delete", "release", "bury", "touch",
	"kick", "kick_job", "peek", "peek_state", "job_stats", "tube_stats",
	"stats", "list_tubes", "pause", "ensure_default",
}

// fn is the full name of one Redis Function of the library.
type fn string

// scripts is the Redis Functions library (FUNCTION LOAD) made of lib.lua and every operation,
// and the names of its functions.
//
// Why Functions rather than EVALSHA: a script cannot call another, so lib.lua had to be
// prepended to every script, and Redis re-ran it (redefining ~30 closures) on every call, about
// 10 µs of the ~25 µs a put cost. A library's top level runs once, at load; each call only runs
// its own body.
//
// Versioning: the library is named beangate_<hash of its text> and every function carries the
// same hash, because function names are global across libraries. Gateways of different
// versions on one Redis thus each use their own library and never replace each other's; an
// old version's library stays loaded (some tens of KiB) until removed with FUNCTION DELETE.
type scripts struct {
	lib  string // library name
	code string // FUNCTION LOAD text

	sessionBegin, sessionEnd, reap, use, watch, ignore fn
	put, reserve, reserveJob, delete, release, bury    fn
	touch, kick, kickJob, peek, peekState, jobStats    fn
	tubeStats, stats, listTubes, pause, ensureDefault  fn
}

// loadScripts assembles the library from the embedded sources. Each operation's file becomes
// the body of a function(KEYS, ARGV), so the files read as ordinary scripts; begin (lib.lua)
// sets the per-call context first. A missing file is a build mistake, hence the panic.
func loadScripts() *scripts {
	var body strings.Builder
	body.WriteString(mustRead("lib"))
	for _, op := range opNames {
		fmt.Fprintf(&body, "\nregister('%s', function(KEYS, ARGV)\nbegin(KEYS, ARGV)\n%s\nend)\n", op, mustRead(op))
	}
	sum := sha1.Sum([]byte(body.String()))
	lib := "beangate_" + hex.EncodeToString(sum[:6])
	// register names each function <library>_<op>.
	code := "#!lua name=" + lib + "\n" +
		"local function register(op, f) redis.register_function('" + lib + "_' .. op, f) end\n" +
		body.String()
	name := func(op string) fn { return fn(lib + "_" + op) }
	return &scripts{
		lib: lib, code: code,
		sessionBegin: name("session_begin"), sessionEnd: name("session_end"), reap: name("reap"),
		use: name("use"), watch: name("watch"), ignore: name("ignore"),
		put: name("put"), reserve: name("reserve"), reserveJob: name("reserve_job"),
		delete: name("delete"), release: name("release"), bury: name("bury"), touch: name("touch"),
		kick: name("kick"), kickJob: name("kick_job"), peek: name("peek"), peekState: name("peek_state"),
		jobStats: name("job_stats"), tubeStats: name("tube_stats"), stats: name("stats"),
		listTubes: name("list_tubes"), pause: name("pause"), ensureDefault: name("ensure_default"),
	}
}

// load (re)loads the library. REPLACE makes it idempotent: gateways of one version load the
// same text, and a Redis restarted without persistence has forgotten it.
func (s *scripts) load(ctx context.Context, c goredis.UniversalClient) error {
	if err := c.FunctionLoadReplace(ctx, s.code).Err(); err != nil {
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
		panic(fmt.Sprintf("backend/redis: embedded script %s: %v", name, err))
	}
	return string(b)
}
