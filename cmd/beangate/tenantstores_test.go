package main

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each tenant's jobs land in its own namespace of the shared store (a Redis prefix, a PostgreSQL
// schema), none in the main one.
func TestTenantsHaveTheirOwnNamespaceInTheStore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		store func(t *testing.T) (string, func() int)
		param string
	}{
		{"redis", redisStore, "prefix"},
		{"postgres", postgresStore, "schema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mainURL, mainJobs := c.store(t)
			// Two more namespaces of the test's own, cleaned up with it: the tenants'.
			nsOf := func() (string, func() int) {
				u, jobs := c.store(t)
				parsed, err := url.Parse(u)
				require.NoError(t, err)
				return parsed.Query().Get(c.param), jobs
			}
			nsA, jobsA := nsOf()
			nsB, jobsB := nsOf()
			dir := t.TempDir()
			for _, name := range []string{"a", "b"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name+".tokens"), []byte(name+"-token\n"), 0o600))
			}
			config := filepath.Join(dir, "beangate.yaml")
			require.NoError(t, os.WriteFile(config, []byte(`
auth:
  principals:
    - {name: a, token_file: `+dir+`/a.tokens, tenant: a, grants: [{tubes: ["*"], allow: [put, reserve, inspect]}]}
    - {name: b, token_file: `+dir+`/b.tokens, tenant: b, grants: [{tubes: ["*"], allow: [put, reserve, inspect]}]}
  tenants:
    - {name: a, namespace: `+nsA+`}
    - {name: b, namespace: `+nsB+`}
`), 0o600))
			s := startServer(t, "-p", "0", "--backend", mainURL, "--config", config)
			a, b := dial(t, s.addr), dial(t, s.addr)
			require.Equal(t, "AUTHENTICATED\r\n", a.roundTrip(t, "auth a-token\r\n"))
			require.Equal(t, "AUTHENTICATED\r\n", b.roundTrip(t, "auth b-token\r\n"))
			for _, c := range []*client{a, a, b} {
				require.Regexp(t, `^INSERTED \d+\r\n$`, c.roundTrip(t, "put 0 0 60 1\r\nx\r\n"))
			}
			require.Equal(t, 2, jobsA())
			require.Equal(t, 1, jobsB())
			require.Equal(t, 0, mainJobs())
		})
	}
}
