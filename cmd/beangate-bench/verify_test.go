package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
)

// tubeJobs counts a tube's jobs in every state, on a real beanstalkd.
func TestTubeJobsCountsEveryState(t *testing.T) {
	addr := gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Use("bench-verify"))
	require.NoError(t, c.WatchOnly("bench-verify"))
	n, err := tubeJobs(c, "bench-verify")
	require.NoError(t, err)
	require.Zero(t, n)

	for _, delay := range []uint32{0, 3600, 0} {
		_, err = c.Put(jobPriority, delay, jobTTR, []byte("x"))
		require.NoError(t, err)
	}
	c.Send("reserve")
	require.NoError(t, c.Flush())
	_, _, err = c.ReadJob("RESERVED")
	require.NoError(t, err)
	n, err = tubeJobs(c, "bench-verify")
	require.NoError(t, err)
	require.Equal(t, 3, n, "ready, delayed and reserved")

	_, err = tubeJobs(c, "no-such-tube")
	require.Error(t, err)
}
