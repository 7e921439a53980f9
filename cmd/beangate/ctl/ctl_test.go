package ctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/cmd/beangate/ctl"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/console"
	"github.com/beangate/beangate/gateway/gatewaytest"
	"github.com/beangate/beangate/gateway/scheduler"
)

// server is a beanstalk server under test: its protocol address and, for beangate, its ops
// listener.
type server struct {
	addr, api string
}

func startBeangate(t *testing.T) server {
	store := memory.New(memory.Options{})
	t.Cleanup(func() { _ = store.Close() })
	addr, srv := gatewaytest.StartServer(t, store, gateway.Config{Sessions: backend.NewSessionIDs()})
	// Actions need authentication: ctl sends the password (run adds --password with --api).
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	require.NoError(t, err)
	c := console.New(console.Options{Backend: "memory", Auth: console.Auth{User: "admin", PasswordHash: string(hash)}})
	c.Open(store, srv.TubeWaiting)
	// The schedules fire as in the server, which runs a scheduler beside the gateway.
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go scheduler.New(store, slog.New(slog.DiscardHandler), time.Second).Run(ctx)
	mux := http.NewServeMux()
	c.Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return server{addr: addr, api: hs.URL}
}

func startBeanstalkd(t *testing.T) server {
	return server{addr: gatewaytest.StartBeanstalkd(t, gatewaytest.DebianBeanstalkd(t), 0)}
}

// run runs beangate ctl against s and returns its exit status, stdout and stderr.
func (s server) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	full := append([]string{"--addr", s.addr}, args...)
	if s.api != "" {
		full = append([]string{"--api", s.api, "--password", "s3cret"}, full...)
	}
	var out, errOut bytes.Buffer
	code := ctl.Execute(context.Background(), full, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func (s server) ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := s.run(t, args...)
	require.Zero(t, code, "ctl %v: %s", args, errOut)
	return out
}

func (s server) okJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := s.ok(t, append([]string{"-o", "json"}, args...)...)
	require.NoError(t, json.Unmarshal([]byte(out), v), "ctl %v printed %q", args, out)
}

func (s server) conn(t *testing.T) *beanstalk.Conn {
	c, err := beanstalk.Dial("tcp", s.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (s server) tubeStat(t *testing.T, tube, key string) string {
	st, err := beanstalk.NewTube(s.conn(t), tube).Stats()
	require.NoError(t, err)
	return st[key]
}

// onBothServers runs test in parallel against a fresh beanstalkd and a fresh beangate (protocol
// only, no --api).
func onBothServers(t *testing.T, test func(t *testing.T, s server)) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		start func(*testing.T) server
	}{
		{"beanstalkd", startBeanstalkd},
		{"beangate", func(t *testing.T) server { return server{addr: startBeangate(t).addr} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			test(t, tt.start(t))
		})
	}
}

// everyCommand runs each protocol command, text and JSON, and checks its effect over the
// protocol.
func everyCommand(t *testing.T, s server) {
	require.Equal(t, "inserted 1\n", s.ok(t, "put", "jobs", "hello", "--pri", "5"))
	var put map[string]uint64
	s.okJSON(t, &put, "put", "jobs", `{"n":2}`, "--delay", "1h")
	require.Equal(t, uint64(2), put["id"])
	s.ok(t, "put", "other", "x")

	require.Contains(t, s.ok(t, "stats"), "current-jobs-ready: 2\n")
	var stats map[string]any
	s.okJSON(t, &stats, "stats")
	require.EqualValues(t, 2, stats["current-jobs-ready"])

	table := s.ok(t, "tubes")
	require.Regexp(t, `(?m)^\s*TUBE\s+READY\s+URGENT\s+RESERVED\s+DELAYED\s+BURIED\s+TOTAL-JOBS\s`, table)
	require.Regexp(t, `(?m)^\s*jobs\s+1\s+1\s+0\s+1\s+0\s+2\s`, table)
	var tubes []map[string]any
	s.okJSON(t, &tubes, "tubes")
	require.Len(t, tubes, 3)
	require.Equal(t, "jobs", tubes[1]["name"])
	require.EqualValues(t, 1, tubes[1]["delayed"])

	top := s.ok(t, "top", "-n", "2", "--interval", "10ms")
	require.Equal(t, 2, strings.Count(top, "PUTS/S"))
	var frame map[string]any
	s.okJSON(t, &frame, "top", "-n", "1")
	require.Len(t, frame["tubes"], 3)

	peek := s.ok(t, "peek", "1")
	require.Contains(t, peek, "body: hello\n")
	require.Contains(t, peek, "pri: 5\n")
	var job map[string]any
	s.okJSON(t, &job, "peek", "jobs", "--state", "delayed")
	require.Equal(t, `{"n":2}`, job["body"])
	require.Equal(t, "delayed", job["stats"].(map[string]any)["state"])

	require.Equal(t, "kicked 1 job\n", s.ok(t, "kick", "jobs", "5"))
	require.Equal(t, "2", s.tubeStat(t, "jobs", "current-jobs-ready"))
	s.ok(t, "put", "jobs", "three", "--delay", "1h")
	var kicked map[string]uint64
	s.okJSON(t, &kicked, "kick", "--job", "4")
	require.Equal(t, uint64(1), kicked["kicked"])
	require.Equal(t, "kicked 0 jobs\n", s.ok(t, "kick", "jobs"))

	require.Equal(t, "paused jobs for 60s\n", s.ok(t, "pause", "jobs", "60"))
	require.Equal(t, "60", s.tubeStat(t, "jobs", "pause"))
	var paused map[string]uint64
	s.okJSON(t, &paused, "pause", "jobs", "0")
	require.Equal(t, "0", s.tubeStat(t, "jobs", "pause"))
	require.Equal(t, uint64(0), paused["paused"])
	require.Equal(t, "unpaused jobs\n", s.ok(t, "pause", "jobs", "0"))

	// The id deleted, not a count that reads like one.
	require.Equal(t, "deleted job 1\n", s.ok(t, "delete", "1"))
	_, err := s.conn(t).Peek(1)
	require.ErrorIs(t, err, beanstalk.ErrNotFound)
	var deleted map[string]uint64
	s.okJSON(t, &deleted, "delete", "2")
	require.Equal(t, uint64(1), deleted["deleted"])
	require.Equal(t, "deleted 2 jobs: 3 4\n", s.ok(t, "delete", "3", "4"))
	code, _, errOut := s.run(t, "delete", "999")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not found")

	code, _, _ = s.run(t, "-o", "yaml", "stats")
	require.Equal(t, 2, code)
}

func TestCtlAgainstBeanstalkd(t *testing.T) {
	t.Parallel()
	s := startBeanstalkd(t)
	everyCommand(t, s)

	// flush falls back to peek and delete, and says so.
	for range 3 {
		s.ok(t, "put", "f", "x")
	}
	s.ok(t, "put", "f", "later", "--delay", "1h")
	code, out, errOut := s.run(t, "flush", "f", "--state", "ready")
	require.Zero(t, code)
	require.Equal(t, "deleted 3 jobs\n", out)
	require.Contains(t, errOut, "through the protocol")
	var flushed map[string]uint64
	s.okJSON(t, &flushed, "flush", "f")
	require.Equal(t, uint64(1), flushed["deleted"])

	// move cannot be done over the protocol; list shows only the first job of the state.
	code, _, errOut = s.run(t, "move", "f", "g")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "cannot move a job to another tube keeping its id")
	s.ok(t, "put", "l", "first")
	s.ok(t, "put", "l", "second")
	code, out, errOut = s.run(t, "list", "l")
	require.Zero(t, code)
	require.Contains(t, errOut, "shows only the first job of a state")
	require.Contains(t, out, "first")
	require.NotContains(t, out, "second")
}

func TestCtlAgainstBeangate(t *testing.T) {
	t.Parallel()
	s := startBeangate(t)
	everyCommand(t, s)

	for i := range 5 {
		s.ok(t, "put", "work", "job"+string(rune('a'+i)), "--pri", "10")
	}
	s.ok(t, "put", "work", "later", "--delay", "1h")
	out := s.ok(t, "list", "work", "--limit", "2")
	require.Regexp(t, `(?m)^ID\s+PRI\s+AGE\s+TIME-LEFT\s+SIZE\s+BODY`, out)
	require.Contains(t, out, "joba")
	require.Contains(t, out, "jobb")
	require.NotContains(t, out, "jobc")
	cursor := out[strings.Index(out, "--after ")+len("--after ") : len(out)-1]
	var page console.Page
	s.okJSON(t, &page, "list", "work", "--limit", "10", "--after", cursor)
	require.Len(t, page.Jobs, 3)
	require.Equal(t, "jobc", string(page.Jobs[0].Body))
	require.Empty(t, page.Next)

	require.Equal(t, "moved 6 jobs\n", s.ok(t, "move", "work", "moved"))
	require.Equal(t, "5", s.tubeStat(t, "moved", "current-jobs-ready"))
	require.Equal(t, "1", s.tubeStat(t, "moved", "current-jobs-delayed"))
	var flushed map[string]uint64
	s.okJSON(t, &flushed, "flush", "moved", "--state", "delayed")
	require.Equal(t, uint64(1), flushed["deleted"])
	code, out, errOut := s.run(t, "flush", "moved")
	require.Zero(t, code, errOut)
	require.Equal(t, "deleted 5 jobs\n", out)
	require.Empty(t, errOut, "no fallback warning with --api")
	require.Equal(t, "0", s.tubeStat(t, "default", "current-jobs-ready"))
}

// Without --api, list shows the first job of the state with its real figures, from stats-job
// (the peek alone gives only the body): nothing invented, on beanstalkd and beangate alike.
func TestCtlListWithoutAPIShowsTheJobsStats(t *testing.T) {
	onBothServers(t, func(t *testing.T, s server) {
		s.ok(t, "put", "l", "first", "--pri", "1024", "--ttr", "90s")
		s.ok(t, "put", "l", "second")
		code, out, errOut := s.run(t, "list", "l")
		require.Zero(t, code, errOut)
		require.Contains(t, errOut, "shows only the first job of a state")
		require.Regexp(t, `(?m)^1\s+1024\s+\d+s\s+\d+s\s+5\s+first$`, out)
		require.NotContains(t, out, "second")

		var page console.Page
		s.okJSON(t, &page, "list", "l")
		require.Len(t, page.Jobs, 1)
		j := page.Jobs[0]
		require.Equal(t, uint64(1), j.ID)
		require.Equal(t, "l", j.Tube, "unquoted, whichever --compat the server answers with")
		require.Equal(t, "ready", j.State)
		require.Equal(t, uint32(1024), j.Priority)
		require.Equal(t, float64(90), j.TTR)
		require.Equal(t, "first", string(j.Body))
		require.Equal(t, 5, j.BodySize)
	})
}

// Every command's usage line works when copied: it names "beangate ctl", not "beangate".
func TestCtlUsageNamesBeangateCtl(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"put", "--help"}, "beangate ctl put TUBE BODY"},
		{[]string{"list", "--help"}, "beangate ctl list TUBE"},
		{[]string{"move", "--help"}, "beangate ctl move FROM TO"},
		{[]string{"kick", "--help"}, "beangate ctl kick (TUBE [N] | --job ID)"},
		{[]string{"peek", "--help"}, "beangate ctl peek (ID | TUBE --state ready|delayed|buried)"},
		{[]string{"--help"}, "beangate ctl [command]"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			code := ctl.Execute(context.Background(), tt.args, strings.NewReader(""), &out, &errOut)
			require.Zero(t, code, errOut.String())
			require.Contains(t, out.String(), "Usage:\n  "+tt.want)
			require.NotRegexp(t, `(?m)^\s*beangate (put|list|move|kick|peek|delete|flush|pause)\b`, out.String())
		})
	}
}

// A failed command says which protocol command failed and why, in the same words on beanstalkd
// and beangate.
func TestCtlErrorsNameTheCommand(t *testing.T) {
	onBothServers(t, func(t *testing.T, s server) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"peek", "999"}, "beangate ctl: peek: not found\n"},
			{[]string{"peek", "jobs", "--state", "buried"}, "beangate ctl: peek-buried: not found\n"},
			{[]string{"kick", "--job", "999"}, "beangate ctl: kick-job: not found\n"},
			{[]string{"delete", "999"}, "beangate ctl: delete 999: delete: not found\n"},
			{[]string{"pause", "nosuchtube", "5"}, "beangate ctl: pause-tube: not found\n"},
			{[]string{"put", "jobs", "x", "--delay", "-1s"}, "beangate ctl: duration must be non-negative, got -1s\n"},
		} {
			code, out, errOut := s.run(t, c.args...)
			require.Equal(t, 1, code, "ctl %v", c.args)
			require.Empty(t, out)
			require.Equal(t, c.want, errOut, "ctl %v", c.args)
		}
	})
}

// With --token, ctl authenticates before its command (beangate's --auth-token-file); a token
// the server refuses is reported with the server's reply.
func TestCtlAuthenticatesWithToken(t *testing.T) {
	t.Parallel()
	store := memory.New(memory.Options{})
	t.Cleanup(func() { _ = store.Close() })
	addr, _ := gatewaytest.StartServer(t, store, gateway.Config{Sessions: backend.NewSessionIDs(),
		Auth: func(token []byte) bool { return string(token) == "s3cret" }})
	s := server{addr: addr}
	require.Equal(t, "inserted 1\n", s.ok(t, "--token", "s3cret", "put", "jobs", "x"))
	code, _, errOut := s.run(t, "--token", "wrong", "stats")
	require.Equal(t, 1, code)
	require.Equal(t, "beangate ctl: auth refused by "+addr+": \"UNAUTHORIZED\"\n", errOut)
}
