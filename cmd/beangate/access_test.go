package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// accessFiles writes a config file with principals (from yaml, where TOKENS stands for the
// directory of the token files) and one token file per name in tokens.
func accessFiles(t *testing.T, yaml string, tokens ...string) (dir, config string) {
	t.Helper()
	dir = t.TempDir()
	for _, name := range tokens {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".tokens"), []byte(name+"-token\n"), 0o600))
	}
	config = filepath.Join(dir, "beangate.yaml")
	require.NoError(t, os.WriteFile(config, []byte(strings.ReplaceAll(yaml, "TOKENS", dir)), 0o600))
	return dir, config
}

const teamsYAML = `
auth:
  principals:
    - name: billing-app
      token_file: TOKENS/billing.tokens
      tenant: billing
      grants:
        - tubes: ["billing-*"]
          allow: [put, reserve, inspect]
    - name: search-app
      token_file: TOKENS/search.tokens
      tenant: search
      grants: [{tubes: ["*"], allow: [put, reserve, inspect, manage]}]
  anonymous:
    grants: [{tubes: ["public-*"], allow: [put]}]
  tenants:
    - name: billing
      namespace: billing
      max_jobs: 2
      max_bytes: 1MiB
      put_rate: 500
    - name: search
      namespace: search
`

// The configuration's principals, tenants and quotas are served: grants refused with
// UNAUTHORIZED on a connection that carries on, the two tenants' tubes apart, a quota reached.
func TestPrincipalsFromTheConfigFile(t *testing.T) {
	t.Parallel()
	_, config := accessFiles(t, teamsYAML, "billing", "search")
	s := startServer(t, "-p", "0", "--config", config, "--http", "127.0.0.1:0", "-V")
	billing := dial(t, s.addr)
	require.Equal(t, "AUTHENTICATED\r\n", billing.roundTrip(t, "auth billing-token\r\n"))
	require.Equal(t, "USING billing-a\r\n", billing.roundTrip(t, "use billing-a\r\n"))
	require.Equal(t, "INSERTED 1\r\n", billing.roundTrip(t, "put 0 0 60 1\r\nb\r\n"))
	require.Equal(t, "INSERTED 2\r\n", billing.roundTrip(t, "put 0 0 60 1\r\nb\r\n"))
	require.Equal(t, "OUT_OF_MEMORY\r\n", billing.roundTrip(t, "put 0 0 60 1\r\nb\r\n"), "max_jobs 2")
	require.Equal(t, "USING other\r\n", billing.roundTrip(t, "use other\r\n"))
	require.Equal(t, "UNAUTHORIZED\r\n", billing.roundTrip(t, "put 0 0 60 1\r\nb\r\n"))
	require.Equal(t, "UNAUTHORIZED\r\n", billing.roundTrip(t, "pause-tube billing-a 1\r\n"))

	search := dial(t, s.addr)
	require.Equal(t, "AUTHENTICATED\r\n", search.roundTrip(t, "auth search-token\r\n"))
	require.Equal(t, "USING billing-a\r\n", search.roundTrip(t, "use billing-a\r\n"))
	require.Equal(t, "INSERTED 1\r\n", search.roundTrip(t, "put 0 0 60 1\r\ns\r\n"), "its own ids")
	require.Equal(t, "FOUND 1 1\r\n", search.roundTrip(t, "peek-ready\r\n"))
	require.Equal(t, "s\r\n", readLine(t, search.r))

	anon := dial(t, s.addr)
	require.Equal(t, "USING public-x\r\n", anon.roundTrip(t, "use public-x\r\n"))
	require.Equal(t, "INSERTED 1\r\n", anon.roundTrip(t, "put 0 0 60 1\r\na\r\n"))
	require.Equal(t, "UNAUTHORIZED\r\n", anon.roundTrip(t, "stats-tube public-x\r\n"))

	_, metrics := s.httpGet(t, "/metrics")
	for _, want := range []string{
		`beangate_tenant_puts_refused_total{quota="max_jobs",tenant="billing"} 1`,
		`beangate_tenant_puts_refused_total{quota="put_rate",tenant="billing"} 0`,
		`beangate_tenant_commands_refused_total{tenant="billing"} 2`,
		`beangate_tenant_commands_refused_total{tenant=""} 1`,
		`beangate_tenant_jobs{state="ready",tenant="billing"} 2`,
		`beangate_tenant_jobs{state="ready",tenant="search"} 1`,
		`beangate_tenant_jobs{state="ready",tenant=""} 1`,
	} {
		require.Contains(t, metrics, want)
	}
	log := s.stderr.String()
	require.Contains(t, log, `level=INFO msg="tenant quota reached: puts answer OUT_OF_MEMORY" tenant=billing quota=max_jobs limit=2`)
	require.Contains(t, log, `level=DEBUG msg="command refused by grant" principal=billing-app tenant=billing command=pause-tube tube=billing-a needs=manage`)
	require.Equal(t, 1, strings.Count(log, "tenant quota reached"), "logged once per crossing")
	require.NotContains(t, log, "billing-token", "no token logged")
	require.NotContains(t, log, "search-token", "no token logged")
}

// Bad principals, grants or tenants stop the start with exit 5 and say what is wrong.
func TestBadAccessConfigurationExits5(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, yaml, want string }{
		{"UnknownGrant", `
auth:
  principals:
    - {name: a, token_file: TOKENS/a.tokens, grants: [{tubes: ["*"], allow: [put, purge]}]}
`, `unknown grant "purge"`},
		{"OverlappingPrincipalsByName", `
auth:
  principals:
    - {name: a, token_file: TOKENS/a.tokens, grants: [{tubes: ["*"], allow: [put]}]}
    - {name: a, token_file: TOKENS/b.tokens, grants: [{tubes: ["*"], allow: [put]}]}
`, "overlapping principals: the name is given twice"},
		{"OverlappingPrincipalsByTokenFile", `
auth:
  principals:
    - {name: a, token_file: TOKENS/a.tokens, grants: [{tubes: ["*"], allow: [put]}]}
    - {name: b, token_file: TOKENS/a.tokens, grants: [{tubes: ["*"], allow: [put]}]}
`, "overlapping principals: token_file"},
		{"OverlappingPrincipalsBySharedToken", `
auth:
  principals:
    - {name: a, token_file: TOKENS/a.tokens, grants: [{tubes: ["*"], allow: [put]}]}
    - {name: b, token_file: TOKENS/same.tokens, grants: [{tubes: ["*"], allow: [put]}]}
`, `a token is also principal`},
		{"TenantWithoutNamespace", `
auth:
  principals:
    - {name: a, token_file: TOKENS/a.tokens, tenant: t, grants: [{tubes: ["*"], allow: [put]}]}
  tenants:
    - {name: t}
`, `auth.tenants[0] ("t"): namespace must be set`},
		{"UnknownTenant", `
auth:
  anonymous: {tenant: nope, grants: [{tubes: ["*"], allow: [put]}]}
`, `auth.anonymous: tenant "nope" is not in auth.tenants`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, config := accessFiles(t, c.yaml, "a", "b")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "same.tokens"), []byte("a-token\n"), 0o600))
			s := launchServer(t, "-p", "0", "--config", config)
			require.Equal(t, exitUsage, s.waitExit(t, 10*time.Second), s.stderr.String())
			require.Contains(t, s.stderr.String(), c.want)
			require.NotContains(t, s.stderr.String(), "a-token", "a token is never quoted")
		})
	}
}

// SIGHUP reloads the grants under load: no connection drops, each connection's next command
// obeys the new grants; a bad configuration on SIGHUP is refused, logged, and the old one stays.
func TestSIGHUPReloadsGrantsUnderLoad(t *testing.T) {
	t.Parallel()
	grants := func(allow string) string {
		return fmt.Sprintf(`
auth:
  principals:
    - name: app
      token_file: TOKENS/app.tokens
      grants: [{tubes: ["app-*"], allow: [%s]}]
`, allow)
	}
	dir, config := accessFiles(t, grants("put, inspect"), "app")
	s := startServer(t, "-p", "0", "--config", config)

	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	var puts, refusals atomic.Int64
	for range 4 {
		nc, err := net.Dial("tcp", s.addr.String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReader(nc)
			do := func(cmd string) (string, error) {
				if _, err := nc.Write([]byte(cmd)); err != nil {
					return "", err
				}
				_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
				return r.ReadString('\n')
			}
			if _, err := do("auth app-token\r\n"); err != nil {
				errs <- err
				return
			}
			if _, err := do("use app-a\r\n"); err != nil {
				errs <- err
				return
			}
			for !stop.Load() {
				got, err := do("put 0 0 60 1\r\nx\r\n")
				switch {
				case err != nil:
					errs <- err
					return
				case strings.HasPrefix(got, "INSERTED "):
					puts.Add(1)
				case got == "UNAUTHORIZED\r\n":
					refusals.Add(1)
				default:
					errs <- fmt.Errorf("reply %q", got)
					return
				}
			}
		}()
	}
	probe := dial(t, s.addr)
	require.Equal(t, "AUTHENTICATED\r\n", probe.roundTrip(t, "auth app-token\r\n"))
	require.Equal(t, "USING app-a\r\n", probe.roundTrip(t, "use app-a\r\n"))
	reload := func(yaml, logged string) {
		t.Helper()
		before := strings.Count(s.stderr.String(), logged)
		require.NoError(t, os.WriteFile(config, []byte(strings.ReplaceAll(yaml, "TOKENS", dir)), 0o600))
		s.signals <- syscall.SIGHUP
		require.Eventually(t, func() bool { return strings.Count(s.stderr.String(), logged) > before }, 5*time.Second, 10*time.Millisecond)
	}
	const reloaded = "SIGHUP: principals, grants and quotas reloaded"
	for round := 0; round < 3; round++ {
		reload(grants("inspect"), reloaded)
		require.Equal(t, "UNAUTHORIZED\r\n", probe.roundTrip(t, "put 0 0 60 1\r\nx\r\n"))
		reload(grants("put, inspect"), reloaded)
		require.Regexp(t, `^INSERTED \d+\r\n$`, probe.roundTrip(t, "put 0 0 60 1\r\nx\r\n"))
	}
	reload(grants("put, purge"), "SIGHUP: configuration refused")
	require.Contains(t, s.stderr.String(), `unknown grant \"purge\"`)
	require.Regexp(t, `^INSERTED \d+\r\n$`, probe.roundTrip(t, "put 0 0 60 1\r\nx\r\n"), "the old grants stay")
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "no connection dropped")
	}
	require.Positive(t, puts.Load())
	require.Positive(t, refusals.Load(), "the load met the narrowed grants")
}
