package failurelog_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/clocktest"
	"github.com/beangate/beangate/internal/failurelog"
)

// lines returns the log's lines.
func lines(buf *gatewaytest.SyncBuffer) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// A run of failures is its first line, then one summary a period while more follow, each with
// the latest error; a period without failure ends the run, and the next failure is a first
// line again. Timed by a fake clock: periods pass only when the test says so.
func TestFirstFailureThenOneSummaryAPeriod(t *testing.T) {
	var buf gatewaytest.SyncBuffer
	clock := clocktest.NewFake(time.Unix(1_000_000, 0))
	l := failurelog.New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})), failurelog.Options{Level: slog.LevelError, Counted: "store calls failed", Clock: clock})
	waitLines := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { return len(lines(&buf)) == n }, 2*time.Second, time.Millisecond, "want %d lines:\n%s", n, buf.String())
		require.Never(t, func() bool { return len(lines(&buf)) > n }, 20*time.Millisecond, time.Millisecond, "more than %d lines:\n%s", n, buf.String())
	}
	fail := func(n int, msg string) {
		for i := range n {
			l.Failed(msg, errors.New("refused #"+string(rune('a'+i))), "op", "put")
		}
	}

	fail(1, "backend failed")
	waitLines(1)
	require.Equal(t, `level=ERROR msg="backend failed" op=put err="refused #a"`, lines(&buf)[0])

	fail(5, "backend failed") // within the first period: counted
	waitLines(1)
	clock.Advance(500 * time.Millisecond)
	fail(2, "beginning session failed")
	waitLines(1)
	clock.Advance(500 * time.Millisecond)
	waitLines(2)
	require.Equal(t, `level=ERROR msg="7 store calls failed in the last 1s" failing_for=1s err="refused #b"`, lines(&buf)[1])

	for i := range 3 { // an outage going on: a summary a period
		fail(4, "backend failed")
		clock.Advance(time.Second)
		waitLines(3 + i)
	}
	require.Equal(t, `level=ERROR msg="4 store calls failed in the last 1s" failing_for=4s err="refused #d"`, lines(&buf)[4])

	clock.Advance(time.Second) // no failure in a whole period: the run ends, silently
	waitLines(5)
	clock.Advance(10 * time.Second)
	waitLines(5)
	require.Zero(t, clock.Pending(), "no timer left between runs")

	fail(3, "backend failed") // a new run starts with a first line
	waitLines(6)
	require.Equal(t, `level=ERROR msg="backend failed" op=put err="refused #a"`, lines(&buf)[5])
	clock.Advance(time.Second)
	waitLines(7)
	require.Equal(t, `level=ERROR msg="2 store calls failed in the last 1s" failing_for=1s err="refused #c"`, lines(&buf)[6])
}

// Many goroutines failing at once still make one first line and one summary.
func TestConcurrentFailuresMakeOneLine(t *testing.T) {
	var buf gatewaytest.SyncBuffer
	clock := clocktest.NewFake(time.Unix(1_000_000, 0))
	l := failurelog.New(slog.New(slog.NewTextHandler(&buf, nil)), failurelog.Options{Level: slog.LevelWarn, Counted: "heartbeats failed", Period: time.Minute, Clock: clock})
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				l.Failed("heartbeat failed", nil)
			}
		}()
	}
	for range 8 {
		<-done
	}
	clock.Advance(time.Minute)
	require.Eventually(t, func() bool { return len(lines(&buf)) == 2 }, 2*time.Second, time.Millisecond, buf.String())
	require.Contains(t, lines(&buf)[0], `msg="heartbeat failed"`)
	require.Contains(t, lines(&buf)[1], `msg="799 heartbeats failed in the last 1m0s" failing_for=1m0s`)
}
