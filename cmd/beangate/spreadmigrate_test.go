package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	beanredis "github.com/beangate/beangate/backend/redis"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/faulttest"
)

// The upgrade path of docs/redis-cluster.md: a namespace of the one-slot layout on a Redis
// Cluster, served by a gateway, is moved into a namespace of the spread layout with `beangate
// migrate --follow beanstalk://OLD_GATEWAY` while a gateway of the new namespace runs. Every job
// keeps its id, tube, priority, state and remaining delay, and a job put at the old gateway
// while the mover follows moves too; afterwards the old ids, which name other buckets than
// their jobs', are found through the new gateway by peek, stats-job, kick-job, reserve-job and
// delete, and the new gateway's own puts never reuse one of them.
func TestMigrateOneSlotNamespaceToSpread(t *testing.T) {
	c := faulttest.StartRedisCluster(t, 3, 0)
	ctx := context.Background()
	openStore := func(query string) *beanredis.Backend {
		opts, err := beanredis.ParseURL(c.URL(query))
		require.NoError(t, err)
		b, err := beanredis.New(ctx, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	old := openStore("prefix=old")
	// Ids above 1024 (a bucket's sequence counts from 1): those the new buckets must skip.
	for range 1100 {
		id, err := old.Put(ctx, backend.PutParams{Tube: "warm", TTR: time.Minute, Body: []byte("x")})
		require.NoError(t, err)
		require.NoError(t, old.Delete(ctx, "", id))
	}
	oldGW, _ := gatewaytest.StartServer(t, old, gateway.Config{Sessions: backend.NewSessionIDs()})
	spread := openStore("prefix=new&layout=spread")
	newGW, _ := gatewaytest.StartServer(t, spread, gateway.Config{Sessions: backend.NewSessionIDs()})

	type oldJob struct {
		tube, body, state string
		pri               uint32
		delay             time.Duration
	}
	tubes := []string{"mail", "sms", "push"}
	jobs := map[uint64]oldJob{}
	oc := dialBeanstalk(t, oldGW)
	for i := range 24 {
		j := oldJob{tube: tubes[i%3], body: fmt.Sprintf("job %d", i), state: "ready", pri: uint32(100 + i%5)}
		switch i % 4 {
		case 1:
			j.state, j.delay = "delayed", time.Hour
		case 2:
			j.state = "buried"
		}
		oc.Tube = *beanstalk.NewTube(oc, j.tube)
		pri := j.pri
		if j.state == "buried" {
			pri = 0 // reserved before the tube's ready jobs, then buried with its priority
		}
		id, err := oc.Put([]byte(j.body), pri, j.delay, time.Minute)
		require.NoError(t, err)
		if j.state == "buried" {
			oc.TubeSet = *beanstalk.NewTubeSet(oc, j.tube)
			rid, _, err := oc.Reserve(time.Second)
			require.NoError(t, err)
			require.Equal(t, id, rid)
			require.NoError(t, oc.Bury(id, j.pri))
		}
		jobs[id] = j
	}

	mctx, stop := context.WithCancel(ctx)
	type result struct {
		exit           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	started := time.Now()
	go func() {
		var out, errOut gatewaytest.SyncBuffer
		exit := run(mctx, []string{"migrate", "--follow", "--from", "beanstalk://" + oldGW,
			"--to", c.URL("prefix=new&layout=spread")}, &out, &errOut)
		done <- result{exit, out.String(), errOut.String()}
	}()
	empty := func() bool {
		st, err := oc.Stats()
		require.NoError(t, err)
		return st["current-jobs-ready"] == "0" && st["current-jobs-delayed"] == "0" && st["current-jobs-buried"] == "0"
	}
	waitCond(t, 20*time.Second, "the old namespace emptied", empty)
	// A put at the old gateway while the mover follows.
	oc.Tube = *beanstalk.NewTube(oc, "mail")
	late, err := oc.Put([]byte("late"), 7, 0, time.Minute)
	require.NoError(t, err)
	jobs[late] = oldJob{tube: "mail", body: "late", state: "ready", pri: 7}
	waitCond(t, 10*time.Second, "the late job moved", empty)
	stop()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("beangate migrate --follow did not stop within 30 s of its signal")
	}
	t.Logf("migrated in %v:\n%s", time.Since(started).Round(time.Millisecond), r.stdout)
	require.Equal(t, exitOK, r.exit, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("moved:            %d (ids kept: %d, ids changed: 0)", len(jobs), len(jobs)))

	// Four tubes (default, placed first by the new gateway's sessions, too) on three masters:
	// all three in use, the jobs' tubes on two at least.
	masters, jobMasters := map[string]bool{}, map[string]bool{}
	for _, tube := range append([]string{"default"}, tubes...) {
		ms, err := spread.TubeMasters(ctx, tube)
		require.NoError(t, err)
		require.Len(t, ms, 1)
		masters[ms[0]] = true
		if tube != "default" {
			jobMasters[ms[0]] = true
		}
	}
	require.Len(t, masters, 3, "the new namespace's tubes span the three masters")
	require.GreaterOrEqual(t, len(jobMasters), 2, "the jobs' tubes span two masters or more")

	nc := dialBeanstalk(t, newGW)
	forwarded := 0
	for id, j := range jobs {
		body, err := nc.Peek(id)
		require.NoError(t, err, "peek %d", id)
		require.Equal(t, j.body, string(body))
		st, err := nc.StatsJob(id)
		require.NoError(t, err, "stats-job %d", id)
		require.Equal(t, []string{strconv.FormatUint(id, 10), strconv.Quote(j.tube), j.state, strconv.FormatUint(uint64(j.pri), 10)},
			[]string{st["id"], st["tube"], st["state"], st["pri"]}, "job %d", id)
		if j.state == "delayed" {
			left, err := strconv.Atoi(st["time-left"])
			require.NoError(t, err)
			require.InDelta(t, 3600-time.Since(started).Seconds(), left, 5, "job %d keeps its remaining delay", id)
		}
		if id%1024 != uint64(bucketOf(t, c, j.tube)) {
			forwarded++
		}
	}
	require.Positive(t, forwarded, "some old ids name another bucket than their tube's")

	// Commands that change a job by its old id, through the new gateway.
	for id, j := range jobs {
		switch j.state {
		case "buried":
			require.NoError(t, nc.KickJob(id), "kick-job %d", id)
			require.NoError(t, nc.Delete(id), "delete %d", id)
		case "delayed":
			reserveJob(t, newGW, id, j.body)
		default:
			require.NoError(t, nc.Delete(id), "delete %d", id)
		}
		_, err := nc.Peek(id)
		if j.state != "delayed" {
			require.ErrorIs(t, err, beanstalk.ErrNotFound, "job %d deleted", id)
		}
	}

	// The new namespace's own ids never reuse an old one, in any bucket an old id names.
	for _, tube := range tubes {
		nc.Tube = *beanstalk.NewTube(nc, tube)
		for range 20 {
			id, err := nc.Put([]byte("new"), 1, 0, time.Minute)
			require.NoError(t, err)
			_, taken := jobs[id]
			require.False(t, taken, "new id %d is an old job's", id)
		}
	}
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{c.Addr(0)}})
	defer cc.Close()
	for id := range jobs {
		seq, err := cc.Get(ctx, fmt.Sprintf("{new:%d}:ids", id%1024)).Int64()
		require.NoError(t, err, "bucket %d, named by old id %d, has a sequence", id%1024, id)
		require.GreaterOrEqual(t, seq, int64(id/1024), "bucket %d's sequence is past old id %d", id%1024, id)
	}
}

// dialBeanstalk is a go-beanstalk client of addr, closed when the test ends.
func dialBeanstalk(t *testing.T, addr string) *beanstalk.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c := beanstalk.NewConn(nc)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// reserveJob reserves job id, whose body is body, through reserve-job on a connection of its
// own (go-beanstalk has no such command): a reply other than that job fails the test.
func reserveJob(t *testing.T, addr string, id uint64, body string) {
	t.Helper()
	g := gatewaytest.Dial(t, addr)
	g.Do(fmt.Sprintf("reserve-job %d\r\n", id), fmt.Sprintf("RESERVED %d %d\r\n%s\r\n", id, len(body), body))
}

// bucketOf is the bucket of tube's first shard in namespace "new", from its placement record.
func bucketOf(t *testing.T, c *faulttest.RedisCluster, tube string) int {
	t.Helper()
	n := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{c.Addr(0)}})
	defer n.Close()
	rec, err := n.HGet(context.Background(), "{new}:place", tube).Result()
	require.NoError(t, err)
	var bk int
	_, err = fmt.Sscanf(rec, "%d", &bk)
	require.NoError(t, err)
	return bk
}

// waitCond polls cond until it holds, failing the test after d.
func waitCond(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
