package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestLuaCost is a measurement driver, not a pass/fail test: it runs a fixed
// sequence of the `cycle` scenario's operations (put, reserve, delete; 100-byte bodies, one
// tube) against the Redis at BEANGATE_LUACOST and reports, per job, the Redis commands (INFO
// commandstats, scripts' inner calls included), the FCALLs and, when that Redis runs under
// `valgrind --tool=callgrind`, the instructions it executed (callgrind_control, which must
// see its process: same host). Instruction counts do not depend on the machine's load, so two
// versions of the Lua can be compared exactly. Skipped unless BEANGATE_LUACOST is set; see
// docs/benchmarks-redis.md for how to run it. BEANGATE_LUACOST_JOBS sets the jobs per mode (400),
// BEANGATE_LUACOST_MODES picks modes (lone,batch2,batch8), BEANGATE_LUACOST_DUMP=1 has callgrind
// write a profile of each mode's measured part (for callgrind_annotate).
//
// It talks to Redis with a plain client and loads the library itself (no Backend: its lease
// renewals and reaper would add work the driver does not control). Modes:
//   - lone:   every operation its own FCALL of its function, as a gateway sends it when it is
//     alone (one connection);
//   - batchK: K sessions, each FCALL of the batch function holding for each session the delete
//     of its previous job, a put and a reserve (3K operations), as a gateway coalesces the
//     calls of many connections.
func TestLuaCost(t *testing.T) {
	url := os.Getenv("BEANGATE_LUACOST")
	if url == "" {
		t.Skip("measurement driver: set BEANGATE_LUACOST=redis://host:port (a private Redis, ideally under callgrind)")
	}
	jobs := 400
	if v := os.Getenv("BEANGATE_LUACOST_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		jobs = n
	}
	ctx := context.Background()
	opts, err := goredis.ParseURL(url)
	require.NoError(t, err)
	opts.ReadTimeout, opts.WriteTimeout = time.Minute, time.Minute // valgrind is ~50× slower
	c := goredis.NewClient(opts)
	defer c.Close()
	sc := loadScripts()
	require.NoError(t, sc.load(ctx, c, "x"))
	pid := c.InfoMap(ctx, "server").Item("Server", "process_id")

	for _, mode := range []struct {
		name     string
		sessions int // 0: lone calls
	}{{"lone", 0}, {"batch2", 2}, {"batch8", 8}} {
		if m := os.Getenv("BEANGATE_LUACOST_MODES"); m != "" && !slices.Contains(strings.Split(m, ","), mode.name) {
			continue
		}
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		base := "{luacost-" + hex.EncodeToString(rnd[:]) + "}"
		keys := []string{base + ":stats"}
		d := &costDriver{t: t, ctx: ctx, c: c, sc: sc, base: base, keys: keys, body: strings.Repeat("x", 100)}
		n := max(mode.sessions, 1)
		sessions := make([]string, n)
		for i := range sessions {
			sessions[i] = fmt.Sprintf("luacost.%d", i+1)
			d.lone(opSessionBegin, sessions[i], "luacost", "600000")
			d.lone(opUse, sessions[i], "cost")
			d.lone(opWatch, sessions[i], "cost")
			d.lone(opIgnore, sessions[i], "default")
		}
		run := func(jobs int) {
			if mode.sessions == 0 {
				for range jobs {
					d.lone(opPut, d.putArgs(sessions[0])...)
					res := d.lone(opReserve, sessions[0], "1000", "2", "cost")
					d.lone(opDelete, sessions[0], res.([]any)[1])
				}
				return
			}
			prev := make([]any, n) // the job each session reserved in the previous batch
			for range jobs / n {
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
		}
		run(20 * n) // warm-up: the library's first calls, the key names' allocations
		require.NoError(t, c.ConfigResetStat(ctx).Err())
		dump := os.Getenv("BEANGATE_LUACOST_DUMP") != ""
		if dump {
			_ = exec.Command("callgrind_control", "-z", pid).Run()
		}
		before, cg := callgrindIr(pid)
		run(jobs)
		after, _ := callgrindIr(pid)
		if dump { // for callgrind_annotate: the file is named by valgrind's --callgrind-out-file
			_ = exec.Command("callgrind_control", "--dump="+mode.name, pid).Run()
		}
		cmds, fcalls, each := commandStats(t, ctx, c)
		line := fmt.Sprintf("%-7s %5d jobs: %6.2f commands/job, %5.3f FCALLs/job", mode.name, jobs,
			float64(cmds)/float64(jobs), float64(fcalls)/float64(jobs))
		if cg {
			line += fmt.Sprintf(", %8.0f instructions/job (callgrind)", float64(after-before)/float64(jobs))
		}
		names := slices.Sorted(maps.Keys(each))
		var per []string
		for _, name := range names {
			per = append(per, fmt.Sprintf("%s %.2f", name, float64(each[name])/float64(jobs)))
		}
		line += "\n        per job: " + strings.Join(per, ", ")
		t.Log(line)
		deleteKeys(ctx, c, base)
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

// costDriver sends TestLuaCost's calls: the server's time (now ""), as the gateway does.
type costDriver struct {
	t    *testing.T
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
	require.NoError(d.t, err, o)
	return res
}

func (d *costDriver) batch(calls []memoCall) []any {
	args := []any{d.base}
	for _, c := range calls {
		args = append(args, string(c.op), "", len(c.args))
		args = append(args, c.args...)
	}
	res, err := d.c.FCall(d.ctx, d.sc.batch, d.keys, args...).Result()
	require.NoError(d.t, err)
	replies := res.([]any)
	for i, r := range replies {
		if e, ok := r.(goredis.Error); ok {
			d.t.Fatalf("%s: %v", calls[i].op, e)
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

// commandStats is the calls of every command since CONFIG RESETSTAT (INFO commandstats: FCALL
// and the commands run from scripts), less the INFO itself, counted as beangate-bench counts
// them; and the FCALLs among them.
func commandStats(t *testing.T, ctx context.Context, c *goredis.Client) (cmds, fcalls int64, each map[string]int64) {
	info, err := c.Info(ctx, "commandstats").Result()
	require.NoError(t, err)
	each = map[string]int64{}
	for _, m := range cmdstatRe.FindAllStringSubmatch(info, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		if m[1] == "info" || m[1] == "config|resetstat" {
			continue
		}
		each[m[1]] = n
		cmds += n
		if m[1] == "fcall" {
			fcalls += n
		}
	}
	return cmds, fcalls, each
}

var cmdstatRe = regexp.MustCompile(`(?m)^cmdstat_([^:]+):calls=(\d+)`)

// deleteKeys removes the keys under base.
func deleteKeys(ctx context.Context, c *goredis.Client, base string) {
	iter := c.Scan(ctx, 0, base+":*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}
