package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/beanstalk"
)

// srcJob is what a job looks like through stats-job and peek.
type srcJob struct {
	id                                          uint64
	tube, state                                 string
	pri, delay, ttr, age, left                  uint64
	reserves, timeouts, releases, buries, kicks uint64
	body                                        string
}

func testConn(t testing.TB, addr string) *beanstalk.Conn {
	t.Helper()
	c, err := beanstalk.Dial(context.Background(), addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// must sends one command and requires the reply word: for RESERVED and FOUND it returns the
// job's id and body, for OK the data.
func must(t *testing.T, c *beanstalk.Conn, want, format string, args ...any) (uint64, []byte) {
	t.Helper()
	c.Sendf(format, args...)
	require.NoError(t, c.Flush())
	var (
		id   uint64
		body []byte
		err  error
	)
	switch want {
	case "RESERVED", "FOUND":
		id, body, err = c.ReadJob(want)
	case "OK":
		body, err = c.ReadData()
	default:
		err = c.Expect(want)
	}
	require.NoError(t, err, format, args)
	return id, bytes.Clone(body)
}

func put(t *testing.T, c *beanstalk.Conn, tube string, pri, delay, ttr int, body string) uint64 {
	t.Helper()
	require.NoError(t, c.Use(tube))
	id, err := c.Put(uint32(pri), uint32(delay), uint32(ttr), []byte(body))
	require.NoError(t, err)
	return id
}

// snapshot reads jobs 1..maxID of a beanstalk server (those that exist).
func snapshot(t *testing.T, c *beanstalk.Conn, maxID uint64) map[uint64]srcJob {
	t.Helper()
	out := map[uint64]srcJob{}
	for id := uint64(1); id <= maxID; id++ {
		m, err := c.StatsJob(id)
		if errors.Is(err, beanstalk.ErrNotFound) {
			continue
		}
		require.NoError(t, err)
		body, err := c.Peek(id)
		require.NoError(t, err)
		out[id] = srcJob{id: id, tube: m.String("tube"), state: m.String("state"), pri: m.Uint("pri"), delay: m.Uint("delay"),
			ttr: m.Uint("ttr"), age: m.Uint("age"), left: m.Uint("time-left"), reserves: m.Uint("reserves"),
			timeouts: m.Uint("timeouts"), releases: m.Uint("releases"), buries: m.Uint("buries"), kicks: m.Uint("kicks"),
			body: string(body)}
	}
	return out
}

// fromStore reads job id of a store as a srcJob.
func fromStore(t *testing.T, b backend.Backend, id uint64) srcJob {
	t.Helper()
	ctx := context.Background()
	st, err := b.JobStats(ctx, id)
	require.NoError(t, err, "job %d", id)
	j, err := b.Peek(ctx, id)
	require.NoError(t, err)
	s := func(d time.Duration) uint64 { return uint64(d / time.Second) }
	return srcJob{id: id, tube: st.Tube, state: st.State.String(), pri: uint64(st.Priority), delay: s(st.Delay), ttr: s(st.TTR),
		age: s(st.Age), left: s(st.TimeLeft), reserves: uint64(st.Reserves), timeouts: uint64(st.Timeouts),
		releases: uint64(st.Releases), buries: uint64(st.Buries), kicks: uint64(st.Kicks), body: string(j.Body)}
}

// requireSame compares two jobs field by field; age and time-left within a few seconds (the
// protocol gives whole seconds, and time passes).
func requireSame(t *testing.T, want, got srcJob, counters bool) {
	t.Helper()
	name := fmt.Sprintf("job %d (%q)", want.id, want.body)
	require.Equal(t, want.body, got.body, name)
	require.Equal(t, want.tube, got.tube, name)
	require.Equal(t, want.state, got.state, name)
	require.Equal(t, want.pri, got.pri, name)
	require.Equal(t, want.ttr, got.ttr, name)
	require.InDelta(t, want.left, got.left, 3, name+" time-left")
	if !counters {
		return
	}
	require.Equal(t, want.delay, got.delay, name)
	require.InDelta(t, want.age, got.age, 3, name+" age")
	require.Equal(t, [5]uint64{want.reserves, want.timeouts, want.releases, want.buries, want.kicks},
		[5]uint64{got.reserves, got.timeouts, got.releases, got.buries, got.kicks}, name+" reserves, timeouts, releases, buries, kicks")
}

// populate fills a beanstalk server with jobs in every state across tubes: counters of every
// kind, buried jobs out of id order, a paused tube, and a job reserved by a live client that
// releases it (with a new priority) after release. It returns the jobs as they will be once
// that client has released its job, and the highest id.
func populate(t *testing.T, addr string, release time.Duration) (map[uint64]srcJob, uint64) {
	c := testConn(t, addr)
	a1 := put(t, c, "alpha", 10, 0, 60, "a1")
	put(t, c, "alpha", 5, 0, 60, "a2")
	put(t, c, "alpha", 10, 0, 60, "a3")
	put(t, c, "alpha", 3, 100, 60, "a4-delayed")
	a5 := put(t, c, "alpha", 1, 0, 60, "a5")
	a6 := put(t, c, "alpha", 1, 0, 60, "a6")
	t1 := put(t, c, "alpha", 2, 0, 1, "t1-timed-out")
	must(t, c, "RESERVED", "reserve-job %d", a1)
	must(t, c, "RELEASED", "release %d 10 0", a1)
	must(t, c, "RESERVED", "reserve-job %d", a6)
	must(t, c, "BURIED", "bury %d 20", a6)
	must(t, c, "RESERVED", "reserve-job %d", a5)
	must(t, c, "BURIED", "bury %d 21", a5)
	must(t, c, "KICKED", "kick-job %d", a6)
	must(t, c, "RESERVED", "reserve-job %d", a6)
	must(t, c, "BURIED", "bury %d 22", a6) // buried order now: a5, a6
	must(t, c, "RESERVED", "reserve-job %d", t1)
	put(t, c, "paused", 0, 0, 60, "p1")
	put(t, c, "paused", 0, 0, 60, "p2")
	must(t, c, "PAUSED", "pause-tube paused 60")
	put(t, c, "beta", 0, 30, 60, "b1-delayed")
	put(t, c, "beta", 7, 0, 60, "b2")
	// A worker holds h1 and releases it later.
	h1 := put(t, c, "held", 4, 0, 30, "h1-held")
	w := testConn(t, addr)
	must(t, w, "WATCHING", "watch held")
	must(t, w, "WATCHING", "ignore default")
	id, _ := must(t, w, "RESERVED", "reserve")
	require.Equal(t, h1, id)
	time.Sleep(1100 * time.Millisecond) // t1's TTR of 1 s runs out
	maxID := h1
	want := snapshot(t, c, maxID)
	h := want[h1]
	h.state, h.pri, h.releases, h.left = "ready", 77, h.releases+1, 0
	want[h1] = h
	if release == 0 { // the worker keeps it: a binlog's job reserved at a crash comes back ready
		h.pri, h.releases = 4, h.releases-1
		want[h1] = h
		return want, maxID
	}
	go func() {
		time.Sleep(release)
		w.Sendf("release %d 77 0", h1)
		_ = w.Flush()
	}()
	require.Equal(t, uint64(1), want[t1].timeouts)
	require.Equal(t, "buried", want[a6].state)
	return want, maxID
}

func testLog(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// requireDrained checks that the source holds no job any more.
func requireDrained(t *testing.T, addr string) {
	t.Helper()
	m, err := testConn(t, addr).Stats()
	require.NoError(t, err)
	for _, k := range []string{"current-jobs-ready", "current-jobs-delayed", "current-jobs-buried", "current-jobs-reserved"} {
		require.Equal(t, "0", m[k], k)
	}
}

// From Debian's beanstalkd, running, with jobs in every state across tubes, into each beangate
// store: the store holds exactly the source's jobs, with their ids, field by field; the paused
// tube is paused; the job a worker held is moved once released; the source is empty.
func TestOnlineFromBeanstalkdIntoEachStore(t *testing.T) {
	bin := gatewaytest.DebianBeanstalkd(t)
	for _, st := range allStores(t) {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			addr := gatewaytest.StartBeanstalkd(t, bin, 0)
			want, _ := populate(t, addr, 700*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			src, err := OpenSource(ctx, "beanstalk://"+addr, "", false, testLog(t))
			require.NoError(t, err)
			defer src.Close()
			dst := st.dest(t)
			rep, err := Run(ctx, src, dst, Options{Log: testLog(t), Batch: 3})
			require.NoError(t, err)
			require.NoError(t, dst.Close())
			// (The held job is in the store with its release's priority, and the source is
			// empty: the run waited for it.)
			require.Equal(t, uint64(len(want)), rep.Moved)
			require.Equal(t, uint64(len(want)), rep.IDsKept)
			if st.name == "binlog" {
				require.Contains(t, rep.Notes[len(rep.Notes)-1], "pause these tubes again once the server runs: paused (")
			} else {
				require.Equal(t, []string{"paused"}, rep.Paused)
			}
			requireDrained(t, addr)

			b := st.open(t)
			defer b.Close()
			for id, w := range want {
				requireSame(t, w, fromStore(t, b, id), true)
			}
			stats, err := b.Stats(ctx)
			require.NoError(t, err)
			require.Equal(t, uint64(len(want)), stats.ReadyJobs+stats.DelayedJobs+stats.BuriedJobs)
			if st.name != "binlog" {
				ps, err := b.TubeStats(ctx, "paused")
				require.NoError(t, err)
				require.InDelta(t, 60, ps.PauseTimeLeft.Seconds(), 5)
			}
			// Buried order kept: a5 then a6.
			top, err := b.PeekState(ctx, "alpha", backend.Buried)
			require.NoError(t, err)
			require.Equal(t, "a5", string(top.Body))
		})
	}
}

// Into a beanstalk server (the reference 1.13): the same jobs by tube, state, priority, TTR,
// remaining delay and body, under new ids (the report says so), buried in their order.
func TestOnlineFromBeanstalkdIntoABeanstalkServer(t *testing.T) {
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	refBin, _ := gatewaytest.ReferenceBeanstalkd(t)
	to := gatewaytest.StartBeanstalkd(t, refBin, 0)
	want, _ := populate(t, addr, 300*time.Millisecond)
	// The destination has used ids already: the moved jobs cannot keep theirs.
	d := testConn(t, to)
	for range 3 {
		id := put(t, d, "other", 0, 0, 60, "x")
		must(t, d, "DELETED", "delete %d", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := OpenSource(ctx, "beanstalk://"+addr, "", false, testLog(t))
	require.NoError(t, err)
	defer src.Close()
	dst, err := OpenBeanstalkDest(ctx, "beanstalk://"+to)
	require.NoError(t, err)
	rep, err := Run(ctx, src, dst, Options{Log: testLog(t), Batch: 4})
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	require.Equal(t, uint64(len(want)), rep.IDsChanged)
	require.Equal(t, []string{"paused"}, rep.Paused)
	requireDrained(t, addr)

	got := snapshot(t, d, uint64(len(want))+3)
	require.Len(t, got, len(want))
	byBody := map[string]srcJob{}
	for _, j := range got {
		byBody[j.body] = j
	}
	for _, w := range want {
		g, ok := byBody[w.body]
		require.True(t, ok, "job %q moved", w.body)
		requireSame(t, w, g, false)
	}
	must(t, d, "USING", "use alpha")
	_, body := must(t, d, "FOUND", "peek-buried")
	require.Equal(t, "a5", string(body))
	st, err := d.StatsTube("paused")
	require.NoError(t, err)
	require.InDelta(t, 60, st.Uint("pause-time-left"), 5)
}
