package ctl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/beangate/beangate/backend"
	"github.com/beangate/beangate/backend/memory"
	"github.com/beangate/beangate/cmd/beangate/ctl"
	"github.com/beangate/beangate/gateway"
	"github.com/beangate/beangate/gateway/gatewaytest"
)

// A gateway or an ops listener that wants credentials gets an error saying which flag gives
// them.
func TestCtlSaysWhatToDoWhenUnauthorized(t *testing.T) {
	t.Parallel()
	store := memory.New(memory.Options{})
	t.Cleanup(func() { _ = store.Close() })
	addr, _ := gatewaytest.StartServer(t, store, gateway.Config{Sessions: backend.NewSessionIDs(),
		Auth: func(token []byte) bool { return string(token) == "s3cret" }})
	api := startBeangate(t).api // its console wants the password s3cret
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"ProtocolWithoutToken", []string{"--addr", addr, "tubes"},
			`beangate ctl: list-tubes: unexpected reply "UNAUTHORIZED" (want OK): the server wants a token first: pass --token TOKEN (or BEANGATE_CTL_TOKEN), a line of its --auth-token-file` + "\n"},
		{"APIWithoutCredentials", []string{"--api", api, "list", "jobs"},
			"beangate ctl: GET /api/jobs?after=&limit=50&state=ready&tube=jobs: 401 Unauthorized: the ops listener wants credentials: pass --token TOKEN (or BEANGATE_CTL_TOKEN), a line of the gateway's --auth-token-file, or --password (or BEANGATE_CTL_PASSWORD) for the console user --user\n"},
		{"APIWrongPassword", []string{"--api", api, "--password", "wrong", "list", "jobs"},
			"beangate ctl: GET /api/jobs?after=&limit=50&state=ready&tube=jobs: 401 Unauthorized: the ops listener refused the credentials given (--token, or --user and --password)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			code := ctl.Execute(context.Background(), tt.args, strings.NewReader(""), &out, &errOut)
			require.Equal(t, 1, code)
			require.Empty(t, out.String())
			require.Equal(t, tt.want, errOut.String())
		})
	}
}

// The server's help lists ctl's commands from this list, so it names every one.
func TestCommandNamesAreEveryCommand(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.Equal(t, 0, ctl.Execute(context.Background(), []string{"--help"}, strings.NewReader(""), &out, &out))
	names := ctl.CommandNames()
	require.Contains(t, names, "policy")
	require.Contains(t, names, "hash-password")
	for _, name := range names {
		require.Regexp(t, `\n  `+name+` `, out.String())
	}
}
