package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/backendtest"
)

// luacostDump has callgrind write a profile of each mode's measured part, for
// callgrind_annotate (the file is named by valgrind's --callgrind-out-file).
var luacostDump = flag.Bool("luacost.dump", false, "BenchmarkLuaCost: have callgrind dump a profile per mode")

// BenchmarkLuaCost measures what the Lua costs Redis per job of the cycle scenario's operations
// (put, reserve, delete; 100-byte bodies, one tube); an op is one job. It reports, per job, the
// Redis commands (INFO commandstats, scripts' inner calls included), each command's calls and
// the FCALLs, and, when that Redis runs under `valgrind --tool=callgrind` on this host, the
// instructions it executed (callgrind_control). Instruction counts do not depend on the
// machine's load, so two versions of the Lua compare exactly. The Redis is REDIS_URL's (the
// shared test server by default; other clients' commands would count too, so measure a
// private one: docs/benchmarks-redis.md).
//
// It talks to Redis with a plain client and loads the library itself (no Backend: its lease
// renewals and reaper would add work the benchmark does not control). Modes:
//   - lone:   every operation its own FCALL of its function, as a gateway sends it when it is
//     alone (one connection);
//   - batchK: K sessions, each FCALL of the batch function holding for each session the delete
//     of its previous job, a put and a reserve (3K operations), as a gateway coalesces the
//     calls of many connections;
//   - MODE-history: MODE with the tube under a policy keeping jobs' histories (history: true),
//     what a job's history costs over no policy at all.
//
// It also reports the Redis main thread's CPU per job (INFO cpu), which other clients' work
// and the host's load blur: compare modes of one run.
func BenchmarkLuaCost(b *testing.B) {
	ctx := context.Background()
	opts, err := goredis.ParseURL(redisURL())
	require.NoError(b, err)
	opts.ReadTimeout, opts.WriteTimeout = time.Minute, time.Minute // valgrind is ~50× slower
	c := goredis.NewClient(opts)
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		backendtest.Unavailable(b, "Redis at %s: %v", redisURL(), err)
	}
	sc := loadScripts()
	require.NoError(b, sc.load(ctx, c, "x"))
	pid := c.InfoMap(ctx, "server").Item("Server", "process_id")

	for _, mode := range []struct {
		name     string
		sessions int // 0: lone calls
		history  bool
	}{{"lone", 0, false}, {"batch2", 2, false}, {"batch8", 8, false}, {"lone-history", 0, true}, {"batch8-history", 8, true}} {
		b.Run(mode.name, func(b *testing.B) {
			var rnd [4]byte
			_, _ = rand.Read(rnd[:])
			base := "{luacost-" + hex.EncodeToString(rnd[:]) + "}"
			defer deleteKeys(ctx, c, base)
			d := &costDriver{tb: b, ctx: ctx, c: c, sc: sc, base: base, keys: []string{base + ":stats"}, body: strings.Repeat("x", 100)}
			if mode.history {
				d.lone(opPolicySet, "cost", encodePolicy(backend.Policy{History: true}))
			}
			n := max(mode.sessions, 1)
			sessions := make([]string, n)
			for i := range sessions {
				sessions[i] = fmt.Sprintf("luacost.%d", i+1)
				d.lone(opSessionBegin, sessions[i], "luacost", "600000")
				d.lone(opUse, sessions[i], "cost")
				d.lone(opWatch, sessions[i], "cost")
				d.lone(opIgnore, sessions[i], "default")
			}
			// run runs at least jobs jobs (whole batches) and returns how many.
			run := func(jobs int) int {
				if mode.sessions == 0 {
					for range jobs {
						d.lone(opPut, d.putArgs(sessions[0])...)
						res := d.lone(opReserve, sessions[0], "1000", "2", "cost")
						d.lone(opDelete, sessions[0], res.([]any)[1])
					}
					return jobs
				}
				batches := (jobs + n - 1) / n
				prev := make([]any, n) // the job each session reserved in the previous batch
				for range batches {
					replies := d.batch(batchCalls(sessions, prev, d))
					for i, r := range replies {
						if calls := len(replies) / n; i%calls == calls-1 { // each session's reserve
							prev[i/calls] = r.([]any)[1]
						}
					}
				}
				var last []memoCall
				for i, s := range sessions {
					last = append(last, memoCall{opDelete, []any{s, prev[i]}})
				}
				d.batch(last)
				return batches * n
			}
			run(20 * n) // warm-up: the library's first calls, the key names' allocations
			if *luacostDump {
				_ = exec.Command("callgrind_control", "-z", pid).Run()
			}
			before := commandStats(b, ctx, c)
			cpuBefore := mainThreadCPU(b, ctx, c)
			irBefore, cg := callgrindIr(pid)
			b.ResetTimer()
			ran := run(b.N)
			b.StopTimer()
			irAfter, _ := callgrindIr(pid)
			cpuAfter := mainThreadCPU(b, ctx, c)
			after := commandStats(b, ctx, c)
			if *luacostDump {
				_ = exec.Command("callgrind_control", "--dump="+mode.name, pid).Run()
			}
			jobs := float64(ran)
			var cmds int64
			for name, calls := range after {
				if calls -= before[name]; calls > 0 {
					cmds += calls
					b.ReportMetric(float64(calls)/jobs, name+"/job")
				}
			}
			b.ReportMetric(float64(cmds)/jobs, "commands/job")
			b.ReportMetric(float64((cpuAfter-cpuBefore).Nanoseconds())/jobs, "redis-cpu-ns/job")
			if cg {
				b.ReportMetric(float64(irAfter-irBefore)/jobs, "instructions/job")
			}
		})
	}
}

// batchCalls is one batch of the batch modes: for each session the delete of the job it
// reserved in the previous batch (none in the first), a put and a reserve, in session order.
func batchCalls(sessions []string, prev []any, d *costDriver) []memoCall {
	var calls []memoCall
	for i, s := range sessions {
		if prev[i] != nil {
			calls = append(calls, memoCall{opDelete, []any{s, prev[i]}})
		}
		calls = append(calls, memoCall{opPut, d.putArgs(s)}, memoCall{opReserve, []any{s, "1000", "2", "cost"}})
	}
	return calls
}

// costDriver sends BenchmarkLuaCost's calls: the server's time (now ""), as the gateway does.
type costDriver struct {
	tb   testing.TB
	ctx  context.Context
	c    *goredis.Client
	sc   *scripts
	base string
	keys []string
	body string
}

func (d *costDriver) putArgs(s string) []any {
	return []any{"cost", "1024", "0", "60000", d.body, "0", s}
}

func (d *costDriver) lone(o op, args ...any) any {
	res, err := d.c.FCall(d.ctx, d.sc.fns[o], d.keys, append([]any{d.base, ""}, args...)...).Result()
	require.NoError(d.tb, err, o)
	return res
}

func (d *costDriver) batch(calls []memoCall) []any {
	args := []any{d.base}
	for _, c := range calls {
		args = append(args, string(c.op), "", len(c.args))
		args = append(args, c.args...)
	}
	res, err := d.c.FCall(d.ctx, d.sc.batch, d.keys, args...).Result()
	require.NoError(d.tb, err)
	replies := res.([]any)
	for i, r := range replies {
		if e, ok := r.(goredis.Error); ok {
			d.tb.Fatalf("%s: %v", calls[i].op, e)
		}
	}
	return replies
}

var totalsRe = regexp.MustCompile(`(?m)^\s+Th \d+\s+([\d,]+)`)

// callgrindIr is the instructions the Redis process pid has executed so far, all threads
// (callgrind_control -e -b), and whether it runs under callgrind.
func callgrindIr(pid string) (int64, bool) {
	out, err := exec.Command("callgrind_control", "-e", "-b", pid).Output()
	if err != nil {
		return 0, false
	}
	var sum int64
	found := false
	for _, m := range totalsRe.FindAllStringSubmatch(string(out), -1) {
		n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err == nil {
			sum += n
			found = true
		}
	}
	return sum, found
}

// commandStats is the calls of every command so far (INFO commandstats: FCALL and the commands
// run from scripts) but INFO itself, by command.
func commandStats(tb testing.TB, ctx context.Context, c *goredis.Client) map[string]int64 {
	info, err := c.Info(ctx, "commandstats").Result()
	require.NoError(tb, err)
	each := map[string]int64{}
	for _, m := range cmdstatRe.FindAllStringSubmatch(info, -1) {
		if m[1] != "info" {
			each[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	return each
}

var cmdstatRe = regexp.MustCompile(`(?m)^cmdstat_([^:]+):calls=(\d+)`)

// mainThreadCPU is the CPU time the Redis main thread has used so far, user and system (INFO
// cpu), where Redis runs the scripts.
func mainThreadCPU(tb testing.TB, ctx context.Context, c *goredis.Client) time.Duration {
	info, err := c.InfoMap(ctx, "cpu").Result()
	require.NoError(tb, err)
	var sum float64
	for _, k := range []string{"used_cpu_user_main_thread", "used_cpu_sys_main_thread"} {
		v, err := strconv.ParseFloat(info["CPU"][k], 64)
		require.NoError(tb, err, k)
		sum += v
	}
	return time.Duration(sum * float64(time.Second))
}

// deleteKeys removes the keys under base.
func deleteKeys(ctx context.Context, c *goredis.Client, base string) {
	iter := c.Scan(ctx, 0, base+":*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}
