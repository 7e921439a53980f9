package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// apiAs calls the console's API with token as a Bearer token; body nil is a GET.
func (s *runningServer) apiAs(t *testing.T, token, path string, body any) (int, string) {
	t.Helper()
	method := http.MethodGet
	var in io.Reader
	if body != nil {
		method = http.MethodPost
		b, err := json.Marshal(body)
		require.NoError(t, err)
		in = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, "http://"+s.opsAddr.String()+path, in)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		_, info := s.apiAs(t, token, "/api/info", nil)
		var i struct{ CSRF string }
		require.NoError(t, json.Unmarshal([]byte(info), &i))
		req.Header.Set("X-CSRF-Token", i.CSRF)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

// The console's API applies the same grants as the beanstalk listener, each token acting as its
// principal in its tenant's store; ctl whoami shows the caller's own principal and grants.
func TestConsoleAPIAppliesGrants(t *testing.T) {
	t.Parallel()
	_, config := accessFiles(t, teamsYAML, "billing", "search")
	s := startServer(t, "-p", "0", "--config", config, "--http", "127.0.0.1:0")
	const billing, search = "billing-token", "search-token"

	code, body := s.apiAs(t, billing, "/api/put", map[string]any{"tube": "billing-a", "body": "b1"})
	require.Equal(t, http.StatusOK, code, body)
	code, body = s.apiAs(t, billing, "/api/put", map[string]any{"tube": "other", "body": "x"})
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, `needs put on tube \"other\"`)
	code, body = s.apiAs(t, search, "/api/put", map[string]any{"tube": "billing-a", "body": "s1"})
	require.Equal(t, http.StatusOK, code, body)
	code, body = s.apiAs(t, search, "/api/put", map[string]any{"tube": "search-b", "body": "s2"})
	require.Equal(t, http.StatusOK, code, body)

	// Each sees its own tenant's tubes, and only those it holds a grant on.
	code, body = s.apiAs(t, billing, "/api/overview", nil)
	require.Equal(t, http.StatusOK, code, body)
	var ov struct {
		Ready uint64
		Tubes []struct{ Name string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ov))
	require.Len(t, ov.Tubes, 1)
	require.Equal(t, "billing-a", ov.Tubes[0].Name)
	require.Equal(t, uint64(1), ov.Ready, "billing's one job, not search's")
	code, body = s.apiAs(t, search, "/api/overview", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &ov))
	require.Equal(t, uint64(2), ov.Ready)

	code, body = s.apiAs(t, billing, "/api/job?id=1", nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"tube":"billing-a"`)
	code, body = s.apiAs(t, billing, "/api/tube?name=search-b", nil)
	require.Equal(t, http.StatusForbidden, code, body)
	// Actions need manage: billing-app has none, search-app has it everywhere.
	code, body = s.apiAs(t, billing, "/api/pause", map[string]any{"tube": "billing-a", "seconds": 1})
	require.Equal(t, http.StatusForbidden, code, body)
	code, body = s.apiAs(t, billing, "/api/delete", map[string]any{"id": 1})
	require.Equal(t, http.StatusForbidden, code, body)
	code, body = s.apiAs(t, search, "/api/pause", map[string]any{"tube": "search-b", "seconds": 1})
	require.Equal(t, http.StatusOK, code, body)
	code, _ = s.apiAs(t, "nobody", "/api/overview", nil)
	require.Equal(t, http.StatusUnauthorized, code)

	exit, stdout, stderr := runArgs(t, "ctl", "--api", "http://"+s.opsAddr.String(), "--token", billing, "whoami")
	require.Equal(t, exitOK, exit, stderr)
	require.Equal(t, "principal: billing-app\ntenant: billing\ngrant: put, reserve, inspect on billing-*\n", stdout)
	require.NotContains(t, s.stderr.String(), billing, "no token logged")
}
