package ctl_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/console"
)

// job ID prints a job's stats and history, as a table or JSON; a job of a tube without history
// says how to get one; without --api, or for a missing job, it fails saying why.
func TestCtlJob(t *testing.T) {
	t.Parallel()
	s := startBeangate(t)
	s.ok(t, "policy", "set", "kept", "--history", "--retry-delay", "2s")
	c := s.conn(t)
	c.Tube.Name = "kept"
	id, err := c.Put([]byte("x"), 0, 0, time.Minute)
	require.NoError(t, err)
	c.TubeSet.Name = map[string]bool{"kept": true}
	got, _, err := c.Reserve(time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.NoError(t, c.Release(id, 0, 0))

	out := s.ok(t, "job", strconv.FormatUint(id, 10))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 6, out)
	require.Regexp(t, `^job \d+ in kept: delayed, pri 0, age \d+s, reserves 1, timeouts 0, releases 1, buries 0, kicks 0$`, lines[0])
	require.Regexp(t, `^TIME\s+EVENT\s+CONNECTION\s+ADDRESS\s+DETAIL$`, lines[1])
	for i, want := range []string{`put\s+\S+\.\d+\s+127\.0\.0\.1:\d+\s+-`, `reserved\s+\S+\.\d+\s+127\.0\.0\.1:\d+\s+-`,
		`released\s+\S+\.\d+\s+127\.0\.0\.1:\d+\s+-`, `delayed\s+-\s+-\s+delay 2s, by policy retry-delay`} {
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+`+want+`$`, lines[2+i])
	}
	var j console.Job
	s.okJSON(t, &j, "job", strconv.FormatUint(id, 10))
	require.Len(t, j.Events, 4)
	require.Equal(t, console.Event{At: j.Events[3].At, Kind: "delayed", Delay: 2, Policy: "retry-delay"}, j.Events[3])

	c.Tube.Name = "plain"
	plain, err := c.Put([]byte("y"), 0, 0, time.Minute)
	require.NoError(t, err)
	require.Contains(t, s.ok(t, "job", strconv.FormatUint(plain, 10)),
		"no history: its tube keeps none (beangate ctl policy set plain --history, for jobs put from then on)\n")

	code, _, errOut := s.run(t, "job", "999999")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "404")
	code, _, errOut = server{addr: s.addr}.run(t, "job", "1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "needs a beangate's ops listener (--api URL)")
	code, _, _ = s.run(t, "job", "x")
	require.Equal(t, 2, code)
}
