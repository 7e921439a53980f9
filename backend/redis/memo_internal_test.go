package redis

import (
	"context"
	"sort"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// memoCall is one operation of TestBatchMemoMatchesLoneCalls: its name and its own arguments
// (ARGV[3..]).
type memoCall struct {
	op   op
	args []any
}

// A batch's operations share one memo of the tube hashes and counters (lib.lua): each must still
// answer, write and publish exactly as if it had been called alone. So each sequence below, in
// which an operation changes what an earlier one of the same call read (a watch, an ignore that
// drops a tube, a pause, a session's end, a reserve counted as waiting, counters read by stats),
// runs once as one lone FCALL per operation in one namespace and once as one batch in another:
// the replies, the publishes and every key of the two namespaces must be equal.
func TestBatchMemoMatchesLoneCalls(t *testing.T) {
	body := strings.Repeat("b", 20)
	put := func(s, tube string, delay string) memoCall {
		return memoCall{opPut, []any{tube, "100", delay, "60000", body, "0", s}}
	}
	reserve := func(s string, mode string, tubes ...string) memoCall {
		args := []any{s, "1000", mode}
		for _, tb := range tubes {
			args = append(args, tb)
		}
		return memoCall{opReserve, args}
	}
	del := func(s string, id uint64) memoCall { return memoCall{opDelete, []any{s, padID(id)}} }
	begin := func(s string) memoCall { return memoCall{opSessionBegin, []any{s, "p1", "60000"}} }
	watch := func(s, tube string) memoCall { return memoCall{opWatch, []any{s, tube}} }
	ignore := func(s, tube string) memoCall { return memoCall{opIgnore, []any{s, tube}} }
	use := func(s, tube string) memoCall { return memoCall{opUse, []any{s, tube}} }
	pause := func(tube, ms string) memoCall { return memoCall{opPause, []any{tube, ms}} }
	tubeStats := func(tube string) memoCall { return memoCall{opTubeStats, []any{tube}} }
	stats := memoCall{opStats, nil}
	end := func(s string) memoCall { return memoCall{opSessionEnd, []any{s, "p1"}} }
	s1, s2 := "p1.1", "p1.2"
	setup := []memoCall{begin(s1), begin(s2), use(s1, "a"), watch(s2, "a"), ignore(s2, "default")}

	tests := []struct {
		name  string
		calls []memoCall
	}{
		{"a waiting reserve is counted before a put notifies", []memoCall{
			put(s1, "a", "0"), reserve(s2, "2", "a"), reserve(s2, "3", "a"), put(s1, "a", "0"), reserve(s2, "1", "a"),
		}},
		{"a pause stops the next reserve, an unpause lets it", []memoCall{
			put(s1, "a", "0"), reserve(s2, "2", "a"), pause("a", "5000"), reserve(s2, "3", "a"),
			pause("a", "0"), reserve(s2, "1", "a"), tubeStats("a"),
		}},
		{"a tube dropped by an ignore exists again after a watch", []memoCall{
			watch(s2, "b"), ignore(s2, "b"), tubeStats("b"), watch(s2, "b"), tubeStats("b"),
			put(s1, "a", "0"), use(s1, "b"), put(s1, "b", "0"), tubeStats("b"), stats,
		}},
		{"a tube dropped by its last delete starts its counters again", []memoCall{
			use(s1, "c"), put(s1, "c", "0"), use(s1, "a"), watch(s2, "c"), reserve(s2, "0", "c"),
			ignore(s2, "c"), del(s2, 1), tubeStats("c"), use(s1, "c"), put(s1, "c", "0"), tubeStats("c"), stats,
		}},
		{"a session's end returns its jobs to the next reserve", []memoCall{
			put(s1, "a", "0"), put(s1, "a", "0"), reserve(s2, "0", "a"), reserve(s2, "0", "a"), end(s2),
			begin(s2), watch(s2, "a"), reserve(s2, "0", "a"), tubeStats("a"),
		}},
		{"counters pending in the call are read by stats", []memoCall{
			put(s1, "a", "0"), put(s1, "a", "2000"), stats, tubeStats("a"), reserve(s2, "0", "a"),
			del(s2, 1), tubeStats("a"), stats, del(s2, 2), tubeStats("a"), stats,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			lone, batched := newInternalBackend(t), newInternalBackend(t)
			const now = "1700000000000"
			for _, b := range []*Backend{lone, batched} {
				for _, c := range setup {
					_, err := memoRun(ctx, b, now, []memoCall{c}, false)
					require.NoError(t, err)
				}
			}
			loneSub, batchSub := memoSubscribe(t, lone), memoSubscribe(t, batched)
			want, err := memoRun(ctx, lone, now, tt.calls, false)
			require.NoError(t, err)
			got, err := memoRun(ctx, batched, now, tt.calls, true)
			require.NoError(t, err)
			require.Equal(t, want, got, "replies")
			require.Equal(t, memoDump(t, lone), memoDump(t, batched), "keys")
			require.Equal(t, loneSub(), batchSub(), "publishes")
		})
	}
}

// memoRun runs calls at now in b's namespace: one FCALL each, or all in one batch; it returns
// the replies, an error as its message.
func memoRun(ctx context.Context, b *Backend, now string, calls []memoCall, batch bool) ([]any, error) {
	norm := func(v any, err error) any {
		if err == goredis.Nil {
			return nil
		}
		if err != nil {
			return "error: " + err.Error()
		}
		if e, ok := v.(goredis.Error); ok {
			return "error: " + e.Error()
		}
		return v
	}
	var out []any
	if !batch {
		for _, c := range calls {
			v, err := b.client.FCall(ctx, b.sc.fns[c.op], b.keys, append([]any{b.base, now}, c.args...)...).Result()
			out = append(out, norm(v, err))
		}
		return out, nil
	}
	args := []any{b.base}
	for _, c := range calls {
		args = append(args, string(c.op), now, len(c.args))
		args = append(args, c.args...)
	}
	res, err := b.client.FCall(ctx, b.sc.batch, b.keys, args...).Result()
	if err != nil {
		return nil, err
	}
	for _, v := range res.([]any) {
		out = append(out, norm(v, nil))
	}
	return out, nil
}

// memoSubscribe subscribes to b's wake-up channel; the function it returns gives the tubes
// published so far, in order, once the publishes made until then have arrived.
func memoSubscribe(t *testing.T, b *Backend) func() []string {
	t.Helper()
	ctx := context.Background()
	sub := b.client.Subscribe(ctx, b.base+":ready")
	t.Cleanup(func() { _ = sub.Close() })
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	return func() []string {
		// A marker published after the calls arrives after their publishes (one connection).
		require.NoError(t, b.client.Publish(ctx, b.base+":ready", "\x00end").Err())
		var got []string
		for {
			m, err := sub.ReceiveMessage(ctx)
			require.NoError(t, err)
			if m.Payload == "\x00end" {
				return got
			}
			got = append(got, m.Payload)
		}
	}
}

// memoDump is every key of b's namespace, named without the namespace, with its value: a
// hash's fields, a sorted set's members and scores, a set's sorted members, a string.
func memoDump(t *testing.T, b *Backend) map[string]any {
	t.Helper()
	ctx := context.Background()
	keys, err := b.client.Keys(ctx, b.base+":*").Result()
	require.NoError(t, err)
	out := map[string]any{}
	for _, k := range keys {
		name := strings.TrimPrefix(k, b.base)
		switch typ := b.client.Type(ctx, k).Val(); typ {
		case "hash":
			out[name] = b.client.HGetAll(ctx, k).Val()
		case "zset":
			out[name] = b.client.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "set":
			m := b.client.SMembers(ctx, k).Val()
			sort.Strings(m)
			out[name] = m
		case "string":
			v := b.client.Get(ctx, k).Val()
			if strings.Contains(name, ":lease:") {
				v = "lease" // its TTL differs, not its value
			}
			out[name] = v
		default:
			t.Fatalf("key %s of type %s", k, typ)
		}
	}
	return out
}

// A lone call runs its operation under pcall, to write back the memo also when it fails
// (scripts.go): a failing command still answers its own error code, as without the pcall.
func TestLoneCallErrorKeepsItsCode(t *testing.T) {
	b := newInternalBackend(t)
	ctx := context.Background()
	require.NoError(t, b.client.Set(ctx, b.base+":t:bad:ready", "x", 0).Err())
	err := b.client.FCall(ctx, b.sc.fns[opPut], b.keys, b.base, "", "bad", "1", "0", "1000", "body", "0", "").Err()
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "WRONGTYPE "), err.Error())
}

// The memo's tube records outlive a call (lib.lua keeps them, not to rebuild them per call), but
// what they read must not: a change made between two calls, here a reserve of another gateway
// counted as waiting on the tube, is seen by the next call, which must publish its put.
func TestMemoReadsAgainInEachCall(t *testing.T) {
	b := newInternalBackend(t)
	ctx := context.Background()
	put := []any{b.base, "", "a", "100", "0", "60000", "body", "0", ""}
	require.NoError(t, b.client.FCall(ctx, b.sc.fns[opPut], b.keys, put...).Err())
	sub := memoSubscribe(t, b)
	require.NoError(t, b.client.HSet(ctx, b.base+":t:a", "wt", "1").Err())
	require.NoError(t, b.client.FCall(ctx, b.sc.fns[opPut], b.keys, put...).Err())
	require.Equal(t, []string{"a"}, sub())
}
