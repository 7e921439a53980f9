package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// consoleHash is the bcrypt hash of the console password s3cret, at bcrypt's least cost.
func consoleHash(t *testing.T) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	require.NoError(t, err)
	return string(hash)
}

// opsCall sends method path to base over HTTP, with Basic Auth admin:password when password is
// set and, for a POST, the CSRF token and a same-origin Origin as the console's page sends.
func opsCall(t *testing.T, method, base, path, password, csrf, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	if password != "" {
		req.SetBasicAuth("admin", password)
	}
	if method == http.MethodPost {
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Origin", base)
	}
	client := http.Client{Timeout: 5 * time.Second}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(out)
}

var csrfField = regexp.MustCompile(`"csrf":"([0-9a-f]*)"`)

// The command's ops listener, over HTTP: a console action is refused without authentication
// (even sent with the token /api/info hands out and the listener's own Origin) and done with
// it; /metrics, /healthz and /readyz answer without credentials either way.
func TestOpsListenerActionsNeedAuthentication(t *testing.T) {
	t.Parallel()
	hash := consoleHash(t)
	tests := []struct {
		name     string
		args     []string
		password string // sent with every console request
		infoCode int
		wantCode int    // of the flush
		wantPeek string // peek-ready on the tube afterwards
	}{
		{"NoAuth", nil, "", http.StatusOK, http.StatusForbidden, "FOUND 1 1\r\n"},
		{"AuthWithoutCredentials", []string{"--console-password-hash", hash}, "", http.StatusUnauthorized, http.StatusUnauthorized, "FOUND 1 1\r\n"},
		{"AuthWithCredentials", []string{"--console-password-hash", hash}, "s3cret", http.StatusOK, http.StatusOK, "NOT_FOUND\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, append([]string{"-p", "0", "--http", "127.0.0.1:0"}, tt.args...)...)
			base := "http://" + s.opsAddr.String()
			c := dial(t, s.addr)
			require.Equal(t, "USING waitq\r\n", c.roundTrip(t, "use waitq\r\n"))
			require.Equal(t, "INSERTED 1\r\n", c.roundTrip(t, "put 0 0 60 1\r\nx\r\n"))
			s.requireReadyz(t, http.StatusOK, "ready")
			for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
				code, _ := s.httpGet(t, path)
				require.Equal(t, http.StatusOK, code, path)
			}

			code, info := opsCall(t, http.MethodGet, base, "/api/info", tt.password, "", "")
			require.Equal(t, tt.infoCode, code, info)
			csrf := ""
			if m := csrfField.FindStringSubmatch(info); m != nil {
				csrf = m[1]
			}
			code, body := opsCall(t, http.MethodPost, base, "/api/flush", tt.password, csrf, `{"tube":"waitq"}`)
			require.Equal(t, tt.wantCode, code, body)
			require.Equal(t, tt.wantPeek, c.roundTrip(t, "peek-ready\r\n"))
		})
	}
}

// A console other hosts can reach without authentication is warned about at start; loopback,
// authentication, or no console at all are not.
func TestOpsListenerWarnsWhenExposedWithoutAuthentication(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(tokens, []byte("tok\n"), 0o600))
	tests := []struct {
		name string
		args []string
		warn bool
	}{
		{"Loopback", []string{"--http", "127.0.0.1:0"}, false},
		{"AllInterfaces", []string{"--http", "0.0.0.0:0"}, true},
		{"AllInterfacesBarePort", []string{"--http", ":0"}, true},
		{"AllInterfacesWithPassword", []string{"--http", "0.0.0.0:0", "--console-password-hash", consoleHash(t)}, false},
		{"AllInterfacesWithTokens", []string{"--http", "0.0.0.0:0", "--auth-token-file", tokens}, false},
		{"AllInterfacesNoConsole", []string{"--http", "0.0.0.0:0", "--console=false"}, false},
		{"MetricsListenerOnAllInterfaces", []string{"--http", "127.0.0.1:0", "--metrics-http", "0.0.0.0:0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, append([]string{"-p", "0"}, tt.args...)...)
			warned := strings.Contains(s.stderr.String(), "the ops listener is reachable from other hosts and the console has no authentication")
			require.Equal(t, tt.warn, warned, s.stderr.String())
		})
	}
}

var metricsListenerLine = regexp.MustCompile(`msg="metrics listener" addr=(\S+)`)

// --metrics-http serves /metrics, /healthz and /readyz and nothing of the console, beside a
// loopback --http or alone.
func TestMetricsListenerServesNoConsole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"BesideTheOpsListener", []string{"--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0"}},
		{"Alone", []string{"--metrics-http", "127.0.0.1:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, append([]string{"-p", "0"}, tt.args...)...)
			m := metricsListenerLine.FindStringSubmatch(s.stderr.String())
			require.NotNil(t, m, s.stderr.String())
			base := "http://" + m[1]
			require.Equal(t, "INSERTED 1\r\n", dial(t, s.addr).roundTrip(t, "put 0 0 10 1\r\nx\r\n"))
			require.Eventually(t, func() bool {
				code, body := opsCall(t, http.MethodGet, base, "/readyz", "", "", "")
				return code == http.StatusOK && body == "ready\n"
			}, 10*time.Second, 20*time.Millisecond)
			code, body := opsCall(t, http.MethodGet, base, "/metrics", "", "", "")
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, body, `beangate_commands_total{command="put",result="ok"} 1`)
			code, _ = opsCall(t, http.MethodGet, base, "/healthz", "", "", "")
			require.Equal(t, http.StatusOK, code)
			for _, path := range []string{"/ui/", "/api/info", "/api/overview"} {
				code, _ := opsCall(t, http.MethodGet, base, path, "", "", "")
				require.Equal(t, http.StatusNotFound, code, path)
			}
			code, _ = opsCall(t, http.MethodPost, base, "/api/flush", "", "", `{"tube":"default"}`)
			require.Equal(t, http.StatusNotFound, code)
			if s.opsAddr != nil {
				code, _ := s.httpGet(t, "/api/info")
				require.Equal(t, http.StatusOK, code, "the console stays on --http")
			}
		})
	}
}
