package memory_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"

	"github.com/beangate/beangate/backend/memory/binlog"
)

// jobSet is what writeEveryState left in a server, for the readers to find.
type jobSet struct {
	ids     map[string]uint64
	bodies  map[uint64][]byte
	deleted uint64
}

// writeEveryState puts jobs in every state a binlog must carry, over TCP: ready with various
// priorities, binary and empty bodies, delayed, buried (two in one tube, in order), reserved at
// the stop (held is the connection holding it), released with and without a delay, kicked from
// buried and from delayed, deleted, three tubes, and a body of exactly maxBody bytes.
func writeEveryState(t *testing.T, addr string, maxBody int) (jobSet, *bs) {
	s := jobSet{ids: map[string]uint64{}, bodies: map[uint64][]byte{}}
	c := dialBS(t, addr)
	put := func(name string, pri, delay, ttr int, body []byte) uint64 {
		id := c.put(pri, delay, ttr, body)
		s.ids[name], s.bodies[id] = id, body
		return id
	}
	put("ready", 5, 0, 60, []byte("a"))
	put("binary", 1, 0, 60, []byte("\r\nbin\x00\xff\r\n"))
	put("empty", 100, 0, 60, []byte{})
	c.must("use t1", nil, "USING t1")
	put("delayed", 10, 3600, 30, []byte("delayed"))
	id := put("buried", 20, 0, 60, []byte("buried"))
	c.reserveJob(id)
	c.must(fmt.Sprintf("bury %d 7", id), nil, "BURIED")
	id = put("released0", 40, 0, 60, []byte("rel0"))
	c.reserveJob(id)
	c.must(fmt.Sprintf("release %d 9 0", id), nil, "RELEASED")
	id = put("releasedDelay", 50, 0, 60, []byte("reld"))
	c.reserveJob(id)
	c.must(fmt.Sprintf("release %d 11 3600", id), nil, "RELEASED")
	id = put("kickedBuried", 60, 0, 60, []byte("kick"))
	c.reserveJob(id)
	c.must(fmt.Sprintf("bury %d 61", id), nil, "BURIED")
	c.must(fmt.Sprintf("kick-job %d", id), nil, "KICKED")
	id = put("kickedDelayed", 70, 3600, 60, []byte("kd"))
	c.must(fmt.Sprintf("kick-job %d", id), nil, "KICKED")
	id = put("deleted", 80, 0, 60, []byte("del"))
	c.must(fmt.Sprintf("delete %d", id), nil, "DELETED")
	delete(s.ids, "deleted")
	s.deleted = id
	c.must("use t2", nil, "USING t2")
	big := make([]byte, maxBody)
	for i := range big {
		big[i] = byte(rand.IntN(256))
	}
	put("max", 0, 0, 60, big)
	for _, name := range []string{"buriedFirst", "buriedSecond"} {
		id := put(name, 3, 0, 60, []byte(name))
		c.reserveJob(id)
		c.must(fmt.Sprintf("bury %d 3", id), nil, "BURIED")
	}
	held := dialBS(t, addr)
	held.must("use t1", nil, "USING t1")
	id = held.put(30, 0, 60, []byte("held"))
	s.ids["reservedAtStop"], s.bodies[id] = id, []byte("held")
	held.reserveJob(id)
	return s, held
}

// copyDir copies the binlog files of src to a fresh directory, so that two readers each get
// their own.
func copyDir(t *testing.T, src string) string {
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o600))
	}
	return dst
}

// compareReaders starts beanstalkd and beangate each on a copy of dir and requires them to
// serve the same jobs: every stats-job figure (beside the documented bury-count quirk and
// the clock-driven age and time-left, which must agree within a few seconds), the bodies, and
// the reserve order over every tube. It returns beangate's stats-job answers.
func compareReaders(t *testing.T, dir string, s jobSet, maxBody int) map[string]map[string]string {
	bin := gatewaytest.DebianBeanstalkd(t)
	// beanstalkd refuses on replay a body of exactly -z bytes (its off-by-two), so it reads with
	// a -z two higher; beangate reads with the same -z the writer had.
	bsAddr, _ := startBeanstalkd(t, bin, "-b", copyDir(t, dir), "-z", strconv.Itoa(maxBody+2))
	bgAddr, _ := startBeangate(t, binlog.Options{Dir: copyDir(t, dir)}, uint32(maxBody))
	want, got := dialBS(t, bsAddr), dialBS(t, bgAddr)
	out := map[string]map[string]string{}
	for name, id := range s.ids {
		w, g := want.statsJob(id), got.statsJob(id)
		require.NotNil(t, w, "beanstalkd lost %s", name)
		require.NotNil(t, g, "beangate lost %s", name)
		out[name] = g
		if w["state"] == "buried" {
			n, _ := strconv.Atoi(w["buries"])
			w["buries"] = strconv.Itoa(n - 1) // beanstalkd counts a bury again on replay
		}
		for _, k := range []string{"age", "time-left"} {
			wn, _ := strconv.Atoi(w[k])
			gn, _ := strconv.Atoi(g[k])
			require.InDelta(t, wn, gn, 3, "%s %s", name, k)
			delete(w, k)
			delete(g, k)
		}
		require.Equal(t, w, g, name)
		body, ok := got.peek(id)
		require.True(t, ok)
		require.Equal(t, s.bodies[id], body, name)
	}
	require.Nil(t, want.statsJob(s.deleted))
	require.Nil(t, got.statsJob(s.deleted))
	for _, c := range []*bs{want, got} {
		c.must("watch t1", nil, "WATCHING")
		c.must("watch t2", nil, "WATCHING")
		c.must("use t2", nil, "USING")
	}
	require.Equal(t, peekBuried(want), peekBuried(got), "buried order")
	var wantOrder, gotOrder []uint64
	for {
		w, _ := want.reserveAny()
		g, _ := got.reserveAny()
		if w == 0 && g == 0 {
			break
		}
		wantOrder, gotOrder = append(wantOrder, w), append(gotOrder, g)
	}
	require.Equal(t, wantOrder, gotOrder, "reserve order")
	// New ids continue after the highest in the log on both.
	require.Equal(t, want.put(1, 0, 1, []byte("x")), got.put(1, 0, 1, []byte("x")))
	return out
}

// peekBuried lists t2's buried jobs in kick order.
func peekBuried(c *bs) []string {
	var order []string
	for {
		reply, _ := c.do("peek-buried", nil)
		if reply == "NOT_FOUND" {
			return order
		}
		order = append(order, reply)
		c.must("kick 1", nil, "KICKED 1")
	}
}

func TestBinlogWrittenByBeanstalkdIsServedByBeangate(t *testing.T) {
	t.Parallel()
	bin := gatewaytest.DebianBeanstalkd(t)
	dir := t.TempDir()
	addr, stop := startBeanstalkd(t, bin, "-b", dir, "-z", "65535")
	s, _ := writeEveryState(t, addr, 65535)
	stop()
	got := compareReaders(t, dir, s, 65535)
	// What beanstalkd wrote, beangate reads as beanstalkd would (compareReaders), without its
	// quirks:
	require.Equal(t, "1", got["buried"]["buries"])
	require.Equal(t, "ready", got["reservedAtStop"]["state"])
	require.Equal(t, "40", got["released0"]["pri"], "beanstalkd does not write a release without delay")
	require.Equal(t, "delayed", got["releasedDelay"]["state"])
	require.Equal(t, "11", got["releasedDelay"]["pri"])
	require.NotEqual(t, "0", got["ready"]["file"])
}

func TestBinlogWrittenByBeangateIsServedByBeanstalkd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr, stop := startBeangate(t, binlog.Options{Dir: dir, SyncInterval: 50 * time.Millisecond}, 65535)
	s, held := writeEveryState(t, addr, 65535)
	held.must(fmt.Sprintf("touch %d", s.ids["reservedAtStop"]), nil, "TOUCHED")
	stop()
	got := compareReaders(t, dir, s, 65535)
	require.Equal(t, "9", got["released0"]["pri"], "beangate writes a release without delay")
	require.Equal(t, "1", got["kickedBuried"]["kicks"])
	require.Equal(t, "1", got["kickedDelayed"]["kicks"])
}
