package ctl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/gateway/console"
)

// policy set|get|list|clear through the API, and the policy acting on a plain protocol client.
func TestCtlPolicy(t *testing.T) {
	t.Parallel()
	s := startBeangate(t)
	require.Equal(t, "set email-*: --max-reserves 5 --retry-delay 1s --retry-delay-max 10m0s --expire-after 1h0m0s --expire-action bury --max-reserved 3 --rate 50 --burst 10 --unique --history\n",
		s.ok(t, "policy", "set", "email-*", "--max-reserves", "5", "--retry-delay", "1s", "--retry-delay-max", "10m",
			"--expire-after", "1h", "--expire-action", "bury", "--max-reserved", "3", "--rate", "50", "--burst", "10", "--unique", "--history"))
	s.ok(t, "policy", "set", "dlq", "--max-reserves", "1")
	s.ok(t, "policy", "set", "email-vip")

	out := s.ok(t, "policy", "list")
	require.Regexp(t, `(?m)^TUBE\s+MAX-RESERVES\s+RETRY-DELAY\s+EXPIRE-AFTER\s+EXPIRE-ACTION\s+MAX-RESERVED\s+RATE\s+BURST\s+UNIQUE\s+HISTORY$`, out)
	require.Regexp(t, `(?m)^dlq\s+1\s+-\s+-\s+-\s+-\s+-\s+-\s+-\s+-$`, out)
	require.Regexp(t, `(?m)^email-\*\s+5\s+1s\.\.10m0s\s+1h0m0s\s+bury\s+3\s+50/s\s+10\s+yes\s+yes$`, out)
	var ps console.Policies
	s.okJSON(t, &ps, "policy", "list")
	require.Len(t, ps.Policies, 3)
	require.Equal(t, console.Policy{Tube: "email-*", MaxReserves: 5, ExpireAfter: time.Hour.Seconds(), ExpireAction: "bury",
		MaxReserved: 3, Rate: 50, Burst: 10, Unique: true, RetryDelay: 1, RetryMax: 600, History: true}, ps.Policies[1])

	require.Equal(t, "email-bulk: governed by email-*: --max-reserves 5 --retry-delay 1s --retry-delay-max 10m0s --expire-after 1h0m0s --expire-action bury --max-reserved 3 --rate 50 --burst 10 --unique --history\n",
		s.ok(t, "policy", "get", "email-bulk"))
	require.Equal(t, "email-vip: no limits (exempt from broader globs)\n", s.ok(t, "policy", "get", "email-vip"))
	require.Equal(t, "sms: no policy\n", s.ok(t, "policy", "get", "sms"))

	// The dlq policy acts on a client that knows nothing of it: release answers BURIED.
	c := s.conn(t)
	c.Tube.Name = "dlq"
	id, err := c.Put([]byte("x"), 0, 0, time.Minute)
	require.NoError(t, err)
	c.TubeSet.Name = map[string]bool{"dlq": true}
	got, _, err := c.Reserve(time.Second)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.ErrorContains(t, c.Release(id, 0, 0), "buried")
	require.Equal(t, "1", s.tubeStat(t, "dlq", "current-jobs-buried"))

	require.Equal(t, "cleared dlq\n", s.ok(t, "policy", "clear", "dlq"))
	code, _, errOut := s.run(t, "policy", "clear", "dlq")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "404")

	code, _, errOut = s.run(t, "policy", "set", "bad tube")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "bad policy")
	code, _, errOut = s.run(t, "policy", "set", "t", "--burst", "3")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "burst without rate")
	code, _, errOut = s.run(t, "policy", "set", "t", "--retry-delay-max", "1m")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "retry-delay-max without retry-delay")
}

func TestCtlPolicyNeedsTheAPI(t *testing.T) {
	t.Parallel()
	s := server{addr: startBeangate(t).addr}
	code, _, errOut := s.run(t, "policy", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--api")
}
