package gateway_test

import (
	"errors"
	"testing"
	"time"

	beanstalk "github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// TestGoBeanstalkClientDrivesEveryCommand uses a real client library, as a worker fleet would,
// through every command the library has.
func TestGoBeanstalkClientDrivesEveryCommand(t *testing.T) {
	t.Parallel()
	addr, srv := gatewaytest.StartServer(t, newMemory(t), gateway.Config{MaxJobSize: 1024})
	c, err := beanstalk.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()

	jobs := beanstalk.NewTube(c, "jobs")
	id, err := jobs.Put([]byte("hello"), 10, 0, time.Minute)
	require.NoError(t, err)
	delayedID, err := jobs.Put([]byte("later"), 10, time.Hour, time.Minute)
	require.NoError(t, err)

	pid, body, err := jobs.PeekReady()
	require.NoError(t, err)
	require.Equal(t, id, pid)
	require.Equal(t, "hello", string(body))
	pid, _, err = jobs.PeekDelayed()
	require.NoError(t, err)
	require.Equal(t, delayedID, pid)
	_, _, err = jobs.PeekBuried()
	require.ErrorIs(t, err, beanstalk.ErrNotFound)

	watch := beanstalk.NewTubeSet(c, "jobs")
	rid, body, err := watch.Reserve(time.Second)
	require.NoError(t, err)
	require.Equal(t, id, rid)
	require.Equal(t, "hello", string(body))
	require.NoError(t, c.Touch(rid))
	st, err := c.StatsJob(rid)
	require.NoError(t, err)
	require.Equal(t, "reserved", st["state"])
	// go-beanstalk's YAML reader keeps 1.13's quotes (it does the same against beanstalkd 1.13).
	require.Equal(t, `"jobs"`, st["tube"])
	require.NoError(t, c.Release(rid, 5, 0))
	rid, _, err = watch.Reserve(time.Second)
	require.NoError(t, err)
	require.NoError(t, c.Bury(rid, 5))
	n, err := jobs.Kick(10)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	body, err = c.ReserveJob(delayedID)
	require.NoError(t, err)
	require.Equal(t, "later", string(body))
	require.NoError(t, c.Bury(delayedID, 1))
	require.NoError(t, c.KickJob(delayedID))
	body, err = c.Peek(delayedID)
	require.NoError(t, err)
	require.Equal(t, "later", string(body))

	require.NoError(t, c.Delete(id))
	require.NoError(t, c.Delete(delayedID))
	require.ErrorIs(t, c.Delete(id), beanstalk.ErrNotFound)
	_, _, err = watch.Reserve(0)
	require.ErrorIs(t, err, beanstalk.ErrTimeout)

	tubes, err := c.ListTubes()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"default", "jobs"}, tubes)
	ts, err := jobs.Stats()
	require.NoError(t, err)
	require.Equal(t, `"jobs"`, ts["name"])
	require.Equal(t, "2", ts["total-jobs"])
	require.NoError(t, jobs.Pause(time.Minute))
	ts, err = jobs.Stats()
	require.NoError(t, err)
	require.Equal(t, "60", ts["pause"])
	stats, err := c.Stats()
	require.NoError(t, err)
	require.Equal(t, `"1.13"`, stats["version"])
	require.Equal(t, "1024", stats["max-job-size"])

	_, err = jobs.Put(make([]byte, 1025), 0, 0, time.Minute)
	require.ErrorIs(t, err, beanstalk.ErrJobTooBig)
	srv.SetDraining(true)
	_, err = jobs.Put([]byte("x"), 0, 0, time.Minute)
	require.ErrorIs(t, err, beanstalk.ErrDraining)
	stats, err = c.Stats()
	require.NoError(t, err)
	require.Equal(t, "true", stats["draining"])
}

// TestGoBeanstalkDeadlineSoon: the library surfaces DEADLINE_SOON as its own error.
func TestGoBeanstalkDeadlineSoon(t *testing.T) {
	t.Parallel()
	addr, _ := gatewaytest.StartServer(t, newMemory(t), gateway.Config{})
	c, err := beanstalk.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Put([]byte("x"), 0, 0, time.Second)
	require.NoError(t, err)
	_, _, err = c.Reserve(time.Second)
	require.NoError(t, err)
	_, _, err = c.Reserve(time.Second)
	require.True(t, errors.Is(err, beanstalk.ErrDeadline), "got %v", err)
}
