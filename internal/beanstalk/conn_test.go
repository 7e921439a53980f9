package beanstalk_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/internal/beanstalk"
)

// onServers runs test on a connection to each real beanstalkd at hand: Debian's 1.12 and, when
// it is there, 1.13 (which quotes names in its YAML).
func onServers(t *testing.T, test func(t *testing.T, version string, c *beanstalk.Conn)) {
	t.Parallel()
	bins := map[string]string{"1.12": gatewaytest.DebianBeanstalkd(t)}
	if bin, version := gatewaytest.ReferenceBeanstalkd(t); version == "1.13" {
		bins["1.13"] = bin
	}
	for version, bin := range bins {
		t.Run(version, func(t *testing.T) {
			test(t, version, dial(t, gatewaytest.StartBeanstalkd(t, bin, 0)))
		})
	}
}

func dial(t *testing.T, addr string) *beanstalk.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := beanstalk.Dial(ctx, addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestPipelinedJobsAgainstBeanstalkd(t *testing.T) {
	onServers(t, func(t *testing.T, version string, c *beanstalk.Conn) {
		require.NoError(t, c.Use("client"))
		require.NoError(t, c.WatchOnly("client"))

		// Three puts in one flush, replies in order; a body may hold CRLF.
		bodies := []string{"one", "", "three\r\nwith CRLF inside"}
		for _, b := range bodies {
			c.SendPut(5, 0, 60, []byte(b))
		}
		require.NoError(t, c.Flush())
		var ids []uint64
		for range bodies {
			id, err := c.ReadUint("INSERTED")
			require.NoError(t, err)
			ids = append(ids, id)
		}
		require.Equal(t, []uint64{1, 2, 3}, ids)

		for i, want := range bodies {
			c.Send("reserve")
			require.NoError(t, c.Flush())
			id, body, err := c.ReadJob("RESERVED")
			require.NoError(t, err)
			require.Equal(t, ids[i], id)
			require.Equal(t, want, string(body))
			c.SendDelete(id)
			require.NoError(t, c.Flush())
			require.NoError(t, c.Expect("DELETED"))
		}

		c.Send("reserve-with-timeout 0")
		require.NoError(t, c.Flush())
		_, _, err := c.ReadJob("RESERVED")
		require.ErrorIs(t, err, beanstalk.ErrTimedOut)

		err = c.Delete(ids[0])
		require.ErrorIs(t, err, beanstalk.ErrNotFound)
		require.EqualError(t, err, "delete: not found")

		st, err := c.Stats()
		require.NoError(t, err)
		require.Equal(t, uint64(3), st.Uint("cmd-put"))
		require.Equal(t, version, st.String("version"))
	})
}

func TestAdminCommandsAgainstBeanstalkd(t *testing.T) {
	onServers(t, func(t *testing.T, version string, c *beanstalk.Conn) {
		require.NoError(t, c.Use("admin"))
		first, err := c.Put(10, 0, 60, []byte("first"))
		require.NoError(t, err)
		later, err := c.Put(10, 3600, 60, []byte("later"))
		require.NoError(t, err)

		tubes, err := c.ListTubes()
		require.NoError(t, err)
		require.Equal(t, []string{"default", "admin"}, tubes)

		body, err := c.Peek(first)
		require.NoError(t, err)
		require.Equal(t, "first", string(body))
		id, body, err := c.PeekState("delayed")
		require.NoError(t, err)
		require.Equal(t, later, id)
		require.Equal(t, "later", string(body))
		_, _, err = c.PeekState("buried")
		require.ErrorIs(t, err, beanstalk.ErrNotFound)
		require.EqualError(t, err, "peek-buried: not found")

		js, err := c.StatsJob(later)
		require.NoError(t, err)
		require.Equal(t, "admin", js.String("tube"), "quoted by 1.13, not by 1.12")
		require.Equal(t, "delayed", js.String("state"))
		require.Equal(t, uint64(10), js.Uint("pri"))

		n, err := c.Kick(5)
		require.NoError(t, err)
		require.Equal(t, uint64(1), n, "no job buried: the delayed one is kicked")
		require.ErrorIs(t, c.KickJob(later), beanstalk.ErrNotFound, "ready now")

		require.NoError(t, c.PauseTube("admin", 60))
		ts, err := c.StatsTube("admin")
		require.NoError(t, err)
		require.Equal(t, uint64(60), ts.Uint("pause"))
		require.Equal(t, uint64(2), ts.Uint("current-jobs-ready"))
		require.ErrorIs(t, c.PauseTube("nosuchtube", 1), beanstalk.ErrNotFound)
		_, err = c.StatsTube("nosuchtube")
		require.ErrorIs(t, err, beanstalk.ErrNotFound)

		// beanstalkd has no auth: its refusal is an error reply like any other.
		err = c.Auth("secret")
		require.ErrorIs(t, err, beanstalk.ErrUnknownCommand)
		require.EqualError(t, err, "auth: unknown command")
	})
}

// A server that does not speak the protocol as expected gives a ReplyError, not a hang or a
// wrong value.
func TestMalformedReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply string
		read  func(c *beanstalk.Conn) error
	}{
		{"other word", "USING x\r\n", func(c *beanstalk.Conn) error { return c.Expect("DELETED") }},
		{"no CR", "DELETED\n", func(c *beanstalk.Conn) error { return c.Expect("DELETED") }},
		{"id not a number", "INSERTED x\r\n", func(c *beanstalk.Conn) error { _, err := c.ReadUint("INSERTED"); return err }},
		{"job without size", "RESERVED 5\r\n", func(c *beanstalk.Conn) error { _, _, err := c.ReadJob("RESERVED"); return err }},
		{"negative size", "OK -1\r\n", func(c *beanstalk.Conn) error { _, err := c.ReadData(); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, cannedServer(t, tt.reply))
			var re *beanstalk.ReplyError
			require.ErrorAs(t, tt.read(c), &re)
		})
	}
	c := dial(t, cannedServer(t, "FOUND 1 3\r\nabcXY"))
	_, _, err := c.ReadJob("FOUND")
	require.ErrorContains(t, err, "not followed by CRLF")
}

// cannedServer accepts one connection, writes reply and holds the connection open until the
// client closes it.
func cannedServer(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		_, _ = nc.Write([]byte(reply))
		_, _ = io.Copy(io.Discard, nc)
	}()
	return ln.Addr().String()
}

func TestParseStatsAndList(t *testing.T) {
	st := beanstalk.ParseStats([]byte("---\nname: \"a\"\npri: 5\nempty: \nbad line\n"))
	require.Equal(t, `"a"`, st["name"], "as sent")
	require.Equal(t, "a", st.String("name"))
	require.Equal(t, uint64(5), st.Uint("pri"))
	require.Zero(t, st.Uint("empty"))
	require.Zero(t, st.Uint("missing"))
	require.Len(t, st, 3)
	require.Equal(t, []string{"default", "x y"}, beanstalk.ParseList([]byte("---\n- default\n- \"x y\"\n")))
}
