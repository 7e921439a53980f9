package gatewaytest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/console"
)

// apiClient calls a console's /api as one principal, by its Bearer token.
type apiClient struct {
	t     *testing.T
	url   string
	token string
}

// call GETs path, or POSTs body as JSON with the CSRF token when body is not nil, and decodes
// a 200's reply into out (if not nil); it returns the status.
func (a apiClient) call(path string, body, out any) int {
	a.t.Helper()
	method, in, csrf := http.MethodGet, io.Reader(nil), ""
	if body != nil {
		var info struct{ CSRF string }
		require.Equal(a.t, http.StatusOK, a.call("/api/info", nil, &info))
		b, err := json.Marshal(body)
		require.NoError(a.t, err)
		method, in, csrf = http.MethodPost, strings.NewReader(string(b)), info.CSRF
	}
	req, err := http.NewRequest(method, a.url+path, in)
	require.NoError(a.t, err)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	if resp.StatusCode == http.StatusOK && out != nil {
		require.NoError(a.t, json.Unmarshal(got, out), "%s", got)
	}
	return resp.StatusCode
}

// ServeConsole serves srv's console over HTTP for the principals of srv's Access, each
// authenticating by its token; store is srv's main store, of kind backendKind. It returns the
// console's URL.
func ServeConsole(t testing.TB, srv *gateway.Server, store backend.Backend, backendKind string) string {
	c := console.New(console.Options{Backend: backendKind, Callers: srv.CallerByToken, Auth: console.Auth{Token: func(tok []byte) bool {
		_, ok := srv.CallerByToken(tok)
		return ok
	}}})
	c.Open(store, srv.TubeWaiting)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go c.Run(ctx)
	mux := http.NewServeMux()
	c.Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

// consoleAPIIsolated: two tenants with the same tube names, read and acted on through the
// console's /api by each tenant's principal, never meet; the wire agrees.
func consoleAPIIsolated(t *testing.T, newStore func(t *testing.T) backend.Backend) {
	mainStore := newStore(t)
	addr, srv := startWithAccess(t, mainStore, twoTenants(t, newStore))
	url := ServeConsole(t, srv, mainStore, "")
	red := apiClient{t: t, url: url, token: "red-token"}
	blue := apiClient{t: t, url: url, token: "blue-token"}

	for _, b := range []string{"red-1", "red-2"} {
		require.Equal(t, http.StatusOK, red.call("/api/put", map[string]any{"tube": "jobs", "body": b}, nil))
	}
	require.Equal(t, http.StatusOK, blue.call("/api/put", map[string]any{"tube": "jobs", "body": "blue-1", "ttr": 120}, nil))
	require.Equal(t, http.StatusOK, red.call("/api/put", map[string]any{"tube": "red-only", "body": "r"}, nil))
	// A blue worker waits on jobs over the wire: only blue's current-waiting shows it.
	waiter := as(t, addr, "blue")
	waiter.Send("watch jobs\r\nignore default\r\nreserve-with-timeout 0\r\nreserve-with-timeout 0\r\n")
	waiter.Expect("WATCHING 2\r\nWATCHING 1\r\nRESERVED 1 6\r\nblue-1\r\nTIMED_OUT\r\n")
	waiter.Send("reserve\r\n")

	var ov console.Overview
	require.Equal(t, http.StatusOK, red.call("/api/overview", nil, &ov))
	require.Equal(t, uint64(3), ov.Ready, "red's jobs only")
	require.Equal(t, []string{"default", "jobs", "red-only"}, tubeNames(ov.Tubes))
	require.Equal(t, http.StatusOK, blue.call("/api/overview", nil, &ov))
	require.Equal(t, uint64(0), ov.Ready, "blue's one job is reserved")
	require.Equal(t, uint64(1), ov.Reserved)
	require.Equal(t, []string{"default", "jobs"}, tubeNames(ov.Tubes))

	var tube console.Tube
	require.Eventually(t, func() bool {
		return blue.call("/api/tube?name=jobs", nil, &tube) == http.StatusOK && tube.Waiting == 1
	}, 5*time.Second, 10*time.Millisecond, "blue's waiting worker")
	require.Equal(t, uint64(1), tube.Reserved)
	require.Equal(t, http.StatusOK, red.call("/api/tube?name=jobs", nil, &tube))
	require.Equal(t, uint64(2), tube.Ready)
	require.Equal(t, int64(0), tube.Waiting, "blue's worker is not red's")
	require.Equal(t, http.StatusNotFound, blue.call("/api/tube?name=red-only", nil, nil))

	// The same id in each tenant is each tenant's own job.
	var job struct {
		Tube, State string
		Body        []byte
	}
	require.Equal(t, http.StatusOK, red.call("/api/job?id=1", nil, &job))
	require.Equal(t, "red-1", string(job.Body))
	require.Equal(t, "ready", job.State)
	require.Equal(t, http.StatusOK, blue.call("/api/job?id=1", nil, &job))
	require.Equal(t, "blue-1", string(job.Body))
	require.Equal(t, "reserved", job.State)
	require.Equal(t, http.StatusNotFound, blue.call("/api/job?id=3", nil, nil), "red's third job")

	// Actions reach the caller's tenant only.
	require.Equal(t, http.StatusOK, red.call("/api/delete", map[string]any{"id": 2}, nil))
	require.Equal(t, http.StatusOK, red.call("/api/pause", map[string]any{"tube": "jobs", "seconds": 100}, nil))
	require.Equal(t, http.StatusNotFound, blue.call("/api/delete", map[string]any{"id": 3}, nil), "red's job, no such job for blue")
	require.Equal(t, http.StatusOK, blue.call("/api/tube?name=jobs", nil, &tube))
	require.Zero(t, tube.Pause, "red's pause is not blue's")
	require.Equal(t, uint64(1), tube.Reserved)
	require.Equal(t, http.StatusOK, red.call("/api/tube?name=jobs", nil, &tube))
	require.Equal(t, uint64(1), tube.Ready)
	require.Equal(t, float64(100), tube.Pause)

	// The wire sees the same: red's job 3 is still there, blue's tube not paused.
	r := as(t, addr, "red")
	r.Do("peek 3\r\n", "FOUND 3 1\r\nr\r\n")
	require.Equal(t, 1, figure(t, data(t, r, "stats-tube jobs\r\n"), "current-jobs-ready"))
	b := as(t, addr, "blue")
	require.Equal(t, 0, figure(t, data(t, b, "stats-tube jobs\r\n"), "pause"))
	b.Do("peek 2\r\n", "NOT_FOUND\r\n")
}

func tubeNames(tubes []console.Tube) []string {
	names := make([]string, len(tubes))
	for i, t := range tubes {
		names[i] = t.Name
	}
	return names
}
