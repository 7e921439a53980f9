package ctl_test

import (
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/console"
)

// schedule set|list|clear through the API, and the schedule's jobs reaching a plain worker.
func TestCtlSchedule(t *testing.T) {
	t.Parallel()
	s := startBeangate(t)
	code, _, errOut := s.run(t, "schedule", "set", "report", "--tube", "reports", "--cron", "0 * * *")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `bad schedule "report": cron "0 * * *": expected exactly 5 fields, found 4`)
	code, _, errOut = s.run(t, "schedule", "set", "report", "--cron", "0 * * * *")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "--tube is required")

	require.Equal(t, "set report: cron '0 * * * *' Europe/Paris into reports\n",
		s.ok(t, "schedule", "set", "report", "--tube", "reports", "--cron", "0 * * * *", "--timezone", "Europe/Paris",
			"--body", `{"kind":"hourly"}`, "--priority", "5", "--ttr", "2m"))
	require.Equal(t, "set beat: every 1s into beats\n", s.ok(t, "schedule", "set", "beat", "--tube", "beats", "--every", "1s", "--body", "beat"))

	c := s.conn(t)
	ts := beanstalk.NewTubeSet(c, "beats")
	id, body, err := ts.Reserve(3 * time.Second)
	require.NoError(t, err, "the schedule's job reaches a worker")
	require.Equal(t, "beat", string(body))
	require.NoError(t, c.Delete(id))

	out := s.ok(t, "schedule", "list")
	require.Regexp(t, `(?m)^NAME\s+TUBE\s+WHEN\s+LAST-RUN\s+LAST-JOB\s+NEXT-RUN$`, out)
	require.Regexp(t, `(?m)^beat\s+beats\s+every 1s\s+\S+Z\s+\d+\s+\S+Z$`, out)
	require.Regexp(t, `(?m)^report\s+reports\s+cron '0 \* \* \* \*' Europe/Paris\s+-\s+-\s+\S+:00:00Z$`, out)
	var ss console.Schedules
	s.okJSON(t, &ss, "schedule", "list")
	require.Len(t, ss.Schedules, 2)
	report := ss.Schedules[1]
	require.Equal(t, "report", report.Name)
	require.Equal(t, `{"kind":"hourly"}`, report.Body)
	require.Equal(t, uint32(5), *report.Priority)
	require.Equal(t, 120.0, report.TTR)
	require.Nil(t, report.LastRun)
	require.NotNil(t, report.NextRun)
	require.Equal(t, 0, report.NextRun.Minute())

	require.Equal(t, "cleared beat\n", s.ok(t, "schedule", "clear", "beat"))
	code, _, errOut = s.run(t, "schedule", "clear", "beat")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "404")
}
