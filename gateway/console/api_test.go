package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beanstalkd/go-beanstalk"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/beangate/beangate/gateway/console"
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
