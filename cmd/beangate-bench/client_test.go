package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientAgainstBeanstalkd(t *testing.T) {
	addr := startBeanstalkd(t)
	c, err := dial(addr)
	require.NoError(t, err)
	defer c.Close()

	require.NoError(t, c.Use("bench-client"))
	require.NoError(t, c.WatchOnly("bench-client"))

	// Pipelined puts: three commands in one flush, replies in order.
	bodies := []string{"one", "", "three\r\nwith CRLF inside"}
	for _, b := range bodies {
		c.WritePut(jobPriority, 0, jobTTR, []byte(b))
	}
	require.NoError(t, c.Flush())
	var ids []uint64
	for range bodies {
		id, err := c.ReadInserted()
		require.NoError(t, err)
		ids = append(ids, id)
	}
	require.Equal(t, []uint64{1, 2, 3}, ids)

	for i, want := range bodies {
		c.WriteLine("reserve")
		require.NoError(t, c.Flush())
		id, body, err := c.ReadReserved()
		require.NoError(t, err)
		require.Equal(t, ids[i], id)
		require.Equal(t, want, string(body))
		c.WriteDelete(id)
		require.NoError(t, c.Flush())
		require.NoError(t, c.ReadDeleted())
	}

	c.WriteLine("reserve-with-timeout 0")
	require.NoError(t, c.Flush())
	_, _, err = c.ReadReserved()
	require.ErrorIs(t, err, errTimedOut)

	c.WriteDelete(ids[0])
	require.NoError(t, c.Flush())
	var re *replyError
	require.ErrorAs(t, c.ReadDeleted(), &re)
	require.Equal(t, "NOT_FOUND", re.reply)

	doc, err := c.Stats()
	require.NoError(t, err)
	require.Equal(t, "3", yamlFields(doc)["cmd-put"])

	n, err := tubeJobs(c, "bench-client")
	require.NoError(t, err)
	require.Equal(t, 0, n)
}

func TestPidListeningOnFindsBeanstalkd(t *testing.T) {
	addr := startBeanstalkd(t)
	pid, err := pidListeningOn(addr)
	require.NoError(t, err)
	kib, err := rssKiB(pid)
	require.NoError(t, err)
	require.Positive(t, kib)
}
