package redis

import (
	"embed"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// luaFiles holds one script per state change plus lib.lua, the helpers every script starts
// with (Lua scripts cannot call each other, so the library is prepended at load time).
//
//go:embed lua/*.lua
var luaFiles embed.FS

// scripts are the compiled-in scripts, one per operation.
type scripts struct {
	sessionBegin, sessionEnd, reap, use, watch, ignore     *goredis.Script
	put, reserve, reserveJob, delete, release, bury, touch *goredis.Script
	kick, kickJob, peek, peekState, jobStats, tubeStats    *goredis.Script
	stats, listTubes, pause, ensureDefault                 *goredis.Script
}

// loadScripts reads the embedded sources; a missing file is a build mistake, hence the panic.
func loadScripts() *scripts {
	lib := mustRead("lib")
	s := func(name string) *goredis.Script {
		return goredis.NewScript(lib + "\n" + mustRead(name))
	}
	return &scripts{
		sessionBegin: s("session_begin"), sessionEnd: s("session_end"), reap: s("reap"),
		use: s("use"), watch: s("watch"), ignore: s("ignore"),
		put: s("put"), reserve: s("reserve"), reserveJob: s("reserve_job"),
		delete: s("delete"), release: s("release"), bury: s("bury"), touch: s("touch"),
		kick: s("kick"), kickJob: s("kick_job"), peek: s("peek"), peekState: s("peek_state"),
		jobStats: s("job_stats"), tubeStats: s("tube_stats"), stats: s("stats"),
		listTubes: s("list_tubes"), pause: s("pause"), ensureDefault: s("ensure_default"),
	}
}

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("backend/redis: embedded script %s: %v", name, err))
	}
	return string(b)
}
