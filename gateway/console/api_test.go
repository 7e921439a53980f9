package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/beangate/beangate/gateway/console"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// basicAuth is a console Auth with user admin and password s3cret (bcrypt at its least cost:
// each request checks it), and the header a client sends for it.
func basicAuth(t *testing.T) (console.Auth, string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	require.NoError(t, err)
	return console.Auth{User: "admin", PasswordHash: string(hash)}, "Basic YWRtaW46czNjcmV0" // admin:s3cret
}

// call sends method path to the world's console over HTTP with the header authorization (if
// any) and, for a POST, the CSRF token and the console's own Origin, as the page does.
func (w *world) call(method, path, authorization, csrf, body string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(method, w.url+path, strings.NewReader(body))
	require.NoError(w.t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if method == http.MethodPost {
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Origin", w.url)
		req.Header.Set("Content-Type", "application/json")
	}
	return w.do(req)
}

// callWith sends method path with exactly the given headers (Origin is the console's own).
func (w *world) callWith(method, path string, headers map[string]string, body string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(method, w.url+path, strings.NewReader(body))
	require.NoError(w.t, err)
	req.Header.Set("Origin", w.url)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return w.do(req)
}

func (w *world) do(req *http.Request) (int, string) {
	w.t.Helper()
	client := http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(req)
	require.NoError(w.t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(w.t, err)
	return res.StatusCode, string(out)
}

// Every action, over real HTTP, carrying the CSRF token /api/info hands out and a matching
// Origin: refused while no authentication is configured, accepted with it.
func TestActionsNeedAuthentication(t *testing.T) {
	t.Parallel()
	basic, basicHeader := basicAuth(t)
	token := console.Auth{Token: func(tok []byte) bool { return string(tok) == "tok-1" }}
	tests := []struct {
		name          string
		opts          console.Options
		authorization string
		wantStatus    int
		wantErr       string // in the body of a refusal
	}{
		{"NoAuthConfigured", console.Options{}, "", http.StatusForbidden, "actions are off: no authentication is configured"},
		{"NoAuthConfiguredCredentialsIgnored", console.Options{}, basicHeader, http.StatusForbidden, "actions are off: no authentication is configured"},
		{"BasicAuth", console.Options{Auth: basic}, basicHeader, http.StatusOK, ""},
		{"BearerToken", console.Options{Auth: token}, "Bearer tok-1", http.StatusOK, ""},
		{"TokenAsBasicPassword", console.Options{Auth: token}, "Basic YW55OnRvay0x", http.StatusOK, ""}, // any:tok-1
		{"BasicAuthWithoutCredentials", console.Options{Auth: basic}, "", http.StatusUnauthorized, ""},
		{"BasicAuthWrongPassword", console.Options{Auth: basic}, "Basic YWRtaW46d3Jvbmc=", http.StatusUnauthorized, ""}, // admin:wrong
		{"ReadOnlyWithAuth", console.Options{Auth: basic, ReadOnly: true}, basicHeader, http.StatusForbidden, "actions are off: the console is read-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Backend = "memory"
			w := startWorld(t, tt.opts)
			ids := w.put("acts", 3, func(i int) string { return fmt.Sprint(i) })
			c := w.conn()
			id, _, err := beanstalk.NewTubeSet(c, "acts").Reserve(time.Second)
			require.NoError(t, err)
			require.NoError(t, c.Bury(id, 1))

			var info console.Info
			status, body := w.call(http.MethodGet, "/api/info", tt.authorization, "", "")
			if status == http.StatusOK {
				require.NoError(t, json.Unmarshal([]byte(body), &info))
				require.Equal(t, tt.wantStatus != http.StatusOK, info.ReadOnly, "info tells the page whether actions are off")
			}
			for _, a := range []struct{ path, body string }{
				{"/api/put", `{"tube":"acts","body":"new"}`},
				{"/api/pause", `{"tube":"acts","seconds":1}`},
				{"/api/kick-job", fmt.Sprintf(`{"id":%d}`, id)},
				{"/api/kick", `{"tube":"acts","bound":1}`},
				{"/api/delete", fmt.Sprintf(`{"id":%d}`, ids[1])},
				{"/api/move", `{"tube":"acts","to":"acts-moved"}`},
				{"/api/flush", `{"tube":"acts-moved","state":"ready"}`},
			} {
				status, body := w.call(http.MethodPost, a.path, tt.authorization, info.CSRF, a.body)
				require.Equal(t, tt.wantStatus, status, "%s: %s", a.path, body)
				require.Contains(t, body, tt.wantErr, a.path)
			}

			if tt.wantStatus == http.StatusOK {
				for _, id := range ids { // one deleted; the others kicked or ready, moved, flushed
					_, err := c.Peek(id)
					require.ErrorIs(t, err, beanstalk.ErrNotFound)
				}
				return
			}
			// Refused: the tube is as it was.
			require.Equal(t, "2", w.tubeStat("acts", "current-jobs-ready"))
			require.Equal(t, "1", w.tubeStat("acts", "current-jobs-buried"))
			require.Equal(t, "0", w.tubeStat("acts", "pause"))
			require.Equal(t, "3", w.tubeStat("acts", "total-jobs"))
		})
	}
}

// Without authentication the console's pages and reads stay open (only actions are off); the
// page learns why from /api/info, which hands out no CSRF token then.
func TestReadsStayOpenWithoutAuthentication(t *testing.T) {
	t.Parallel()
	w := startWorld(t, console.Options{Backend: "memory"})
	ids := w.put("reads", 1, func(int) string { return "x" })
	for _, path := range []string{
		"/ui/", "/ui/app.js", "/api/info", "/api/overview", "/api/tube?name=reads",
		"/api/jobs?tube=reads&state=ready", fmt.Sprintf("/api/job?id=%d", ids[0]),
	} {
		status, body := w.call(http.MethodGet, path, "", "", "")
		require.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}
	_, body := w.call(http.MethodGet, "/api/info", "", "", "")
	var info console.Info
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	require.True(t, info.ReadOnly)
	require.Contains(t, info.ReadOnlyReason, "no authentication is configured")
	require.Empty(t, info.CSRF)
}

// Every action is logged with who made it (the Basic Auth user, or "token"), from where and what
// it targeted, whatever its outcome; never a password, a token or a job's body.
func TestActionsAreLogged(t *testing.T) {
	t.Parallel()
	basic, basicHeader := basicAuth(t)
	basic.Token = func(tok []byte) bool { return string(tok) == "tok-secret" }
	tests := []struct {
		name          string
		authorization string
		path, body    string
		want          []string // in the action's log line
	}{
		{"PutByUser", basicHeader, "/api/put", `{"tube":"audit","body":"BODY-SECRET","pri":7}`,
			[]string{"action=put", "outcome=done", "who=admin", "tube=audit", "pri=7", "body_bytes=11", "new_id="}},
		{"DeleteByToken", "Bearer tok-secret", "/api/delete", `{"id":%d}`,
			[]string{"action=delete", "outcome=done", "who=token", "id=", "n=1"}},
		{"FlushByTokenAsPassword", "Basic YW55OnRvay1zZWNyZXQ=", "/api/flush", `{"tube":"audit","state":"ready"}`, // any:tok-secret
			[]string{"action=flush", "outcome=done", "who=token", "tube=audit", "state=ready", "n="}},
		{"MoveRefused", basicHeader, "/api/move", `{"tube":"audit","to":"bad name!"}`,
			[]string{"action=move", "outcome=refused", "who=admin", "tube=audit", `to="bad name!"`, "err="}},
		{"DeleteMissing", basicHeader, "/api/delete", `{"id":999999}`,
			[]string{"action=delete", "outcome=failed", "who=admin", "id=999999", "err="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs gatewaytest.SyncBuffer
			w := startWorld(t, console.Options{Backend: "memory", Auth: basic, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			ids := w.put("audit", 1, func(int) string { return "BODY-SECRET" })
			_, body := w.call(http.MethodGet, "/api/info", tt.authorization, "", "")
			var info console.Info
			require.NoError(t, json.Unmarshal([]byte(body), &info))
			actionBody := tt.body
			if strings.Contains(actionBody, "%d") {
				actionBody = fmt.Sprintf(actionBody, ids[0])
			}
			w.callWith(http.MethodPost, tt.path, map[string]string{
				"Authorization": tt.authorization, "X-CSRF-Token": info.CSRF, "X-Forwarded-For": "203.0.113.9"}, actionBody)

			var line string
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, `msg="console action"`) {
					line = l
				}
			}
			require.NotEmpty(t, line, "no action logged in:\n%s", logs.String())
			for _, want := range append(tt.want, "from=127.0.0.1:", "forwarded_for=203.0.113.9") {
				require.Contains(t, line, want)
			}
			for _, secret := range []string{"s3cret", "tok-secret", "BODY-SECRET"} {
				require.NotContains(t, logs.String(), secret)
			}
		})
	}
}

// A reserved job's page names the session holding it and its gateway; other states name none.
func TestJobNamesItsHolder(t *testing.T) {
	t.Parallel()
	w := startWorld(t, console.Options{Backend: "memory"})
	ids := w.put("held", 2, func(int) string { return "x" })
	c := w.conn()
	id, _, err := beanstalk.NewTubeSet(c, "held").Reserve(time.Second)
	require.NoError(t, err)
	require.Equal(t, ids[0], id)
	tests := []struct {
		name        string
		id          uint64
		wantGateway string
		wantHere    bool
	}{
		{"Reserved", ids[0], w.gateway, true},
		{"Ready", ids[1], "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := w.call(http.MethodGet, fmt.Sprintf("/api/job?id=%d", tt.id), "", "", "")
			require.Equal(t, http.StatusOK, status, body)
			var j console.Job
			require.NoError(t, json.Unmarshal([]byte(body), &j))
			require.Equal(t, tt.wantGateway, j.HolderGateway)
			require.Equal(t, tt.wantHere, j.HolderHere)
			if tt.wantGateway == "" {
				require.Empty(t, j.Holder)
				return
			}
			require.True(t, strings.HasPrefix(j.Holder, w.gateway+"."), "session %q of gateway %q", j.Holder, w.gateway)
		})
	}
}

// /api/info names what the page's header shows: the store, its namespace, the gateway, the version.
func TestInfoNamesStoreGatewayAndVersion(t *testing.T) {
	t.Parallel()
	w := startWorld(t, console.Options{Backend: "redis", Namespace: "prefix jobs", Store: "redis://cache:6379/0",
		Gateway: "0123abcd", Version: "v1.2.3"})
	_, body := w.call(http.MethodGet, "/api/info", "", "", "")
	var info console.Info
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	require.Equal(t, console.Info{Backend: "redis", Namespace: "prefix jobs", Store: "redis://cache:6379/0", Gateway: "0123abcd",
		Version: "v1.2.3", ReadOnly: true, ReadOnlyReason: info.ReadOnlyReason}, info)
}
